// SPDX-License-Identifier: Apache-2.0
// Both binaries turn a refused command line and a throwing command into the same
// exit codes.
#include "cli/entry_point.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace gpulens::cli {
namespace {

int parse_exit(std::vector<std::string> args) {
  CLI::App app{"test", "gpulens"};
  app.add_subcommand("stream", "one line per GPU per tick");
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector backwards
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return exit_for_parse_error(app, e);
  }
  return -1;
}

TEST(EntryPoint, HelpAndVersionExitOk) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(parse_exit({"--help"}), kExitOk);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("stream"), std::string::npos);
}

TEST(EntryPoint, RefusedCommandLineIsUsageError) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(parse_exit({"--frobnicate"}), kExitUsage);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("frobnicate"), std::string::npos);
}

TEST(EntryPoint, NoCommandChosenIsUsageError) {
  EXPECT_EQ(run_guarded({}), kExitUsage);
}

TEST(EntryPoint, CommandExitCodePassesThrough) {
  EXPECT_EQ(run_guarded([] { return 3; }), 3);
}

TEST(EntryPoint, ThrowingCommandGivesMessageAndFailure) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_guarded([]() -> int { throw std::runtime_error("bad line"); }), kExitFailure);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "gpulens: internal error: bad line\n");
}

}  // namespace
}  // namespace gpulens::cli

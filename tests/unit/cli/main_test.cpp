// SPDX-License-Identifier: Apache-2.0
// gpulens's main() (main.cpp) through the binary: the version, the command tree
// its help lists, `gpulens help [COMMAND]`, an unknown command, and plain
// `gpulens` on a pipe.
#include <gtest/gtest.h>

#include <string>

#include "cli_support.hpp"

namespace gpulens::cli {
namespace {

using testing::run_gpulens;

TEST(CliMain, VersionNamesTheProgramAndItsVersion) {
  const auto r = run_gpulens("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("gpulens ") + GPULENS_VERSION + "\n");
}

TEST(CliMain, TheHelpListsEveryCommandAndTheExampleToTry) {
  const auto r = run_gpulens("help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.err.empty()) << r.err;
  for (const char* command : {"top", "stream", "record", "diagnose", "run", "report", "serve"}) {
    EXPECT_NE(r.out.find(std::string("\n  ") + command + " "), std::string::npos) << command;
  }
  EXPECT_NE(r.out.find("Plain 'gpulens' on a terminal starts 'gpulens top'."), std::string::npos);
  EXPECT_NE(r.out.find("gpulens report "), std::string::npos);
  EXPECT_NE(r.out.find("calibration-h100.trace.jsonl"), std::string::npos);
  EXPECT_EQ(run_gpulens("--help").out, r.out);
}

TEST(CliMain, HelpForACommandIsThatCommandsUsage) {
  for (const char* command : {"report", "run", "serve", "completion"}) {
    const auto r = run_gpulens(std::string("help ") + command);
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find(std::string("Usage: gpulens ") + command), std::string::npos) << r.out;
  }
}

TEST(CliMain, AnUnknownCommandIsAUsageErrorOnStderr) {
  const auto r = run_gpulens("reprot");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("Did you mean 'gpulens report'?"), std::string::npos) << r.err;
  // An option is not a command: CLI11 answers it.
  EXPECT_EQ(run_gpulens("--frobnicate").exit_code, 2);
}

TEST(CliMain, PlainGpulensOnAPipeIsTheHelpAndAUsageExit) {
  const auto r = run_gpulens("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, run_gpulens("help").out);
}

}  // namespace
}  // namespace gpulens::cli

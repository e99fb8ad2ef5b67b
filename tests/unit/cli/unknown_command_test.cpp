// SPDX-License-Identifier: Apache-2.0
// An unknown command is a usage error with the nearest real command suggested.
#include "cli/unknown_command.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace gpulens::cli {
namespace {

std::unique_ptr<CLI::App> commands() {
  auto app = std::make_unique<CLI::App>("test", "gpulens");
  app->add_subcommand("stream", "one line per GPU per tick");
  app->add_subcommand("diagnose", "a timeline of states");
  app->add_subcommand("report", "the report");
  app->add_subcommand("completion", "")->group("");  // hidden: never suggested
  return app;
}

TEST(UnknownCommand, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("stream", "stream"), 0u);
  EXPECT_EQ(edit_distance("strem", "stream"), 1u);
  EXPECT_EQ(edit_distance("sterams", "stream"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(UnknownCommand, RealCommandsAreNotUnknown) {
  const auto app = commands();
  EXPECT_FALSE(unknown_command(*app, "stream"));
  EXPECT_FALSE(unknown_command(*app, "completion"));
}

TEST(UnknownCommand, SuggestsTheNearestVisibleCommand) {
  const auto app = commands();
  const auto typo = unknown_command(*app, "strem");
  ASSERT_TRUE(typo);
  EXPECT_NE(typo->find("'strem' is not a gpulens command"), std::string::npos) << *typo;
  EXPECT_NE(typo->find("Did you mean 'gpulens stream'?"), std::string::npos) << *typo;
  const auto prefix = unknown_command(*app, "diag");
  ASSERT_TRUE(prefix);
  EXPECT_NE(prefix->find("'gpulens diagnose'"), std::string::npos) << *prefix;
  const auto far = unknown_command(*app, "frobnicate");
  ASSERT_TRUE(far);
  EXPECT_EQ(far->find("Did you mean"), std::string::npos) << *far;
  EXPECT_NE(far->find("gpulens --help"), std::string::npos) << *far;
  const auto hidden = unknown_command(*app, "completio");
  ASSERT_TRUE(hidden);
  EXPECT_EQ(hidden->find("completion"), std::string::npos) << *hidden;
}

}  // namespace
}  // namespace gpulens::cli

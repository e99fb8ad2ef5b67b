// SPDX-License-Identifier: Apache-2.0
// Shell completion generated from the CLI11 command tree: what the tree walk
// keeps and how each shell's script quotes it (the binary's `gpulens completion`
// completing real words in bash: cmd_completion_test.cpp).
#include "cli/completion.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli_support.hpp"

namespace gpulens::cli {
namespace {

TEST(Completion, TreeHasVisibleOptionsAndSubcommandsOnly) {
  CLI::App app{"tool"};
  std::string value;
  bool flag = false;
  app.add_flag("-q,--quiet", flag, "Say less\nsecond line");
  auto* sub = app.add_subcommand("report", "Write a report\nmore");
  sub->add_option("-o,--output", value, "Where");
  sub->add_option("--secret", value, "Hidden")->group("");
  sub->add_option("file", value, "A positional");
  app.add_subcommand("internal", "Hidden command")->group("");

  const CompletionCommand c = describe_command(app);
  ASSERT_EQ(c.subcommands.size(), 1u);
  const auto& report = c.subcommands[0];
  EXPECT_EQ(report.name, "report");
  EXPECT_EQ(report.description, "Write a report");
  ASSERT_EQ(report.options.size(), 2u);  // --help and -o/--output
  EXPECT_EQ(report.options[1].names, (std::vector<std::string>{"--output", "-o"}));
  EXPECT_TRUE(report.options[1].takes_value);
  const auto quiet = std::find_if(c.options.begin(), c.options.end(),
                                  [](const auto& o) { return o.names[0] == "--quiet"; });
  ASSERT_NE(quiet, c.options.end());
  EXPECT_FALSE(quiet->takes_value);
  EXPECT_EQ(quiet->description, "Say less");

  const auto back = options_from_spec(options_to_spec(report.options));
  EXPECT_TRUE(back[1].values.empty());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].names, report.options[1].names);
  EXPECT_EQ(back[1].takes_value, true);
  EXPECT_EQ(back[1].description, "Where");
}

// The words of a value: CLI::IsMember's set, or a list registered for the option;
// both cross gpulens-serve's spec and reach each shell's script.
TEST(Completion, ValuesOfAnOptionReachEveryShell) {
  CLI::App app{"tool"};
  std::string format;
  std::vector<std::string> columns;
  app.add_option("--format", format, "How")->check(CLI::IsMember({"text", "json"}));
  auto* metrics = app.add_option("-m,--metrics", columns, "Which")->delimiter(',');
  completion_values(metrics, {"gpu_util", "sm_active"});
  const CompletionCommand c = describe_command(app);
  const auto back = options_from_spec(options_to_spec(c.options));
  ASSERT_EQ(back.size(), 3u);  // --help, --format, --metrics
  EXPECT_EQ(back[1].values, (std::vector<std::string>{"text", "json"}));
  EXPECT_FALSE(back[1].value_list);
  EXPECT_EQ(back[1].description, "How");
  EXPECT_EQ(back[2].values, (std::vector<std::string>{"gpu_util", "sm_active"}));
  EXPECT_TRUE(back[2].value_list);

  CompletionCommand root{"gpulens", "", {}, {}};
  root.subcommands.push_back({"stream", "Stream", back, {}});
  EXPECT_NE(
      completion_script(root, "bash").find("--metrics|-m) words='gpu_util sm_active'; list=1"),
      std::string::npos);
  EXPECT_NE(completion_script(root, "zsh").find("'--format[How]:value:(text json)'"),
            std::string::npos);
  EXPECT_NE(completion_script(root, "zsh").find(":value:_values -s , value gpu_util sm_active'"),
            std::string::npos);
  EXPECT_NE(completion_script(root, "fish").find("-l format -r -f -a 'text json'"),
            std::string::npos);
}

TEST(Completion, ScriptsQuoteDescriptions) {
  CompletionCommand root{"gpulens", "", {}, {}};
  root.subcommands.push_back({"report", "It's [x]: y", {{{"--a"}, true, "O'k [1]: 2"}}, {}});
  const auto zsh = completion_script(root, "zsh");
  EXPECT_NE(zsh.find(R"('--a[O'\''k \[1\]\: 2]:value:_files')"), std::string::npos) << zsh;
  const auto fish = completion_script(root, "fish");
  EXPECT_NE(fish.find(R"(-l a -r -d 'O\'k [1]: 2')"), std::string::npos) << fish;
  EXPECT_TRUE(completion_script(root, "tcsh").empty());
}

}  // namespace
}  // namespace gpulens::cli

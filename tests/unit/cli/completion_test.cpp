// SPDX-License-Identifier: Apache-2.0
// Shell completion generated from the CLI11 command tree (`gpulens completion`):
// what the tree walk keeps, and the real bash script completing real words.
#include "cli/completion.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli_support.hpp"

namespace gpulens::cli {
namespace {

std::string output_of(const std::string& cmd) {
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  return pclose(pipe) == 0 ? out : "FAILED: " + out;
}

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
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].names, report.options[1].names);
  EXPECT_EQ(back[1].takes_value, true);
  EXPECT_EQ(back[1].description, "Where");
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

// COMP_WORDS as bash fills them for the line typed so far; prints COMPREPLY.
std::string complete_bash(const std::string& script, const std::string& words) {
  return output_of("bash -c 'source \"$0\"; COMP_WORDS=(" + words +
                   "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
                   "if [[ ${COMP_WORDS[0]} == gpulens-serve ]]; then _gpulens_serve; "
                   "else _gpulens; fi; echo \"${COMPREPLY[*]}\"' '" +
                   script + "'");
}

TEST(Completion, BashScriptOfTheBinaryCompletesCommandsAndOptions) {
  const std::string script = ::testing::TempDir() + "/gpulens_completion.bash";
  const std::string text = output_of(std::string("'") + GPULENS_BINARY + "' completion bash");
  ASSERT_EQ(text.rfind("# bash completion", 0), 0u) << text;
  { std::ofstream(script) << text; }
  EXPECT_EQ(complete_bash(script, "gpulens re"), "record report\n");
  EXPECT_EQ(complete_bash(script, "gpulens report --data"), "--data-dir\n");
  EXPECT_EQ(complete_bash(script, "gpulens --ver"), "--version\n");
  // serve's options are the agent's, read from gpulens-serve.
  EXPECT_EQ(complete_bash(script, "gpulens serve --web-c"), "--web-config\n");
  EXPECT_EQ(complete_bash(script, "gpulens-serve --lis"), "--listen\n");
  // After an option that takes a value: file names, not options.
  EXPECT_EQ(complete_bash(script, "gpulens report --data-dir /e"), "/etc\n");
  // The hidden command itself is not offered.
  EXPECT_EQ(complete_bash(script, "gpulens com"), "\n");
  std::remove(script.c_str());
}

TEST(Completion, UnknownShellIsAUsageError) {
  const auto out = output_of(std::string("'") + GPULENS_BINARY + "' completion tcsh 2>&1");
  EXPECT_EQ(out.rfind("FAILED", 0), 0u) << out;
}

}  // namespace
}  // namespace gpulens::cli

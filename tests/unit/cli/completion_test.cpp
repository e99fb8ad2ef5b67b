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
  // Values where the option has them (issue 48), not file names: a set checked
  // with CLI::IsMember, the agent's too, and a comma-separated list after its last comma.
  EXPECT_EQ(complete_bash(script, "gpulens report --format \"\""), "text json html\n");
  EXPECT_EQ(complete_bash(script, "gpulens report --format j"), "json\n");
  EXPECT_EQ(complete_bash(script, "gpulens stream -f c"), "csv\n");
  EXPECT_EQ(complete_bash(script, "gpulens serve --compat \"\""), "dcgm\n");
  EXPECT_EQ(complete_bash(script, "gpulens-serve --compat d"), "dcgm\n");
  EXPECT_EQ(complete_bash(script, "gpulens stream --metrics ten"), "tensor\n");
  EXPECT_EQ(complete_bash(script, "gpulens stream -m sm,memt"), "sm,memtemp\n");
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

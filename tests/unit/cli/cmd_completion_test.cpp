// SPDX-License-Identifier: Apache-2.0
// The hidden `gpulens completion SHELL` through the binary: bash, given its
// script, completes commands, options and their values (the agent's too), and a
// shell it does not know is a usage error.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

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

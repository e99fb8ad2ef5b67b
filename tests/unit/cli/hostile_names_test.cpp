// SPDX-License-Identifier: Apache-2.0
// Names from a recording that hold terminal escapes, run through the real
// binary: nothing of them may reach the terminal (issue 31, item 3). The fixture,
// tests/fixtures/traces/hostile-names.trace.jsonl, gives every name (host, GPU,
// process, user, container, pod, marks, phases, the job's command) the same tail:
// an OSC retitle ended by BEL, a clear screen, an 8-bit CSI (U+009B), a bidi
// override, CR, LF, TAB, DEL and some HTML markup.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli_support.hpp"
#include "core/text_safety.hpp"
#include "exposition/prom_writer.hpp"

namespace gpulens {
namespace {

using testing::run_gpulens;

const std::string kFixture = "tests/fixtures/traces/hostile-names.trace.jsonl";

// Every byte that is a control where output meets a terminal: C0 but the newline
// (no text output of gpulens uses tabs), DEL; and through is_terminal_safe, C1
// controls in UTF-8, bidi overrides and bytes that are not UTF-8 (a raw 0x9B).
void expect_terminal_safe(const std::string& text, const std::string& what) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    ASSERT_FALSE((b < 0x20 && b != '\n') || b == 0x7F)
        << what << ": byte " << static_cast<int>(b) << " at " << i << " in ...\n"
        << text.substr(i > 80 ? i - 80 : 0, 160);
  }
  EXPECT_TRUE(is_terminal_safe(text, true)) << what;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << what << ": C1 CSI";
  EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos) << what << ": bidi override";
}

// The names are shown (replaced, not dropped): the test sees what it checks.
void expect_names_shown(const std::string& text, const std::string& what) {
  const std::string shown = fmt::format("{}]0;PWNED{}{}[2J", kReplacementCharacter,
                                        kReplacementCharacter, kReplacementCharacter);
  EXPECT_NE(text.find(shown), std::string::npos) << what << ":\n" << text;
}

// A name stays on its line: its newline does not start a forged one.
void expect_no_forged_line(const std::string& text, const std::string& what) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? end : end - start);
    EXPECT_FALSE(line.starts_with("\tX") || line.starts_with("X") ||
                 line.starts_with(kReplacementCharacter))
        << what << ": a line begins inside a name: " << line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

TEST(HostileNames, ReportTextKeepsEscapesFromTheTerminal) {
  const auto r = run_gpulens("report " + kFixture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_terminal_safe(r.out, "report stdout");
  expect_terminal_safe(r.err, "report stderr");
  expect_names_shown(r.out, "report");
  expect_no_forged_line(r.out, "report");
  // The command, host, GPU and phase names all made it into the verdict.
  for (const char* name : {"python train.py ", "NVIDIA H100 ", "phase-"}) {
    EXPECT_NE(r.out.find(fmt::format("{}{}]0;PWNED", name, kReplacementCharacter)),
              std::string::npos)
        << name << "\n"
        << r.out;
  }
}

TEST(HostileNames, DiagnoseTextKeepsEscapesFromTheTerminal) {
  const auto r = run_gpulens("diagnose --replay " + kFixture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_terminal_safe(r.out, "diagnose stdout");
  expect_terminal_safe(r.err, "diagnose stderr");
  expect_names_shown(r.out, "diagnose");
  expect_no_forged_line(r.out, "diagnose");
}

TEST(HostileNames, TopOnceKeepsEscapesFromTheTerminal) {
  const auto r = run_gpulens("top --once --width 200 --replay " + kFixture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_terminal_safe(r.out, "top stdout");
  expect_terminal_safe(r.err, "top stderr");
  expect_names_shown(r.out, "top");
  // The process row: its user, container and command, all replaced.
  EXPECT_NE(r.out.find(fmt::format("N{}]0;PWNED", kReplacementCharacter)), std::string::npos)
      << r.out;
}

TEST(HostileNames, ReportJsonEscapesEveryControl) {
  const auto r = run_gpulens("report --format json " + kFixture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // nlohmann writes C0 controls as \u escapes (DEL and C1 stay as they are, valid
  // JSON: docs/report.md, "Names from elsewhere").
  for (const char c : r.out) {
    const auto b = static_cast<unsigned char>(c);
    ASSERT_FALSE(b < 0x20 && b != '\n') << static_cast<int>(b);
  }
  EXPECT_NE(r.out.find("\\u001b]0;PWNED\\u0007"), std::string::npos);
}

TEST(HostileNames, ReportHtmlEscapesMarkupAndControls) {
  const auto r = run_gpulens("report --format html " + kFixture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("<x-pwn"), std::string::npos) << "a name became markup";
  EXPECT_NE(r.out.find("&lt;x-pwn a=&quot;1&quot; b=&#39;2&#39;&gt;&amp;amp;"), std::string::npos);
  // The page itself: no control but newlines outside the hover data's JSON (where
  // nlohmann writes them as \u escapes, so none is raw either).
  for (const char c : r.out) {
    const auto b = static_cast<unsigned char>(c);
    ASSERT_FALSE((b < 0x20 && b != '\n') || b == 0x7F) << static_cast<int>(b);
  }
  EXPECT_EQ(r.out.find("\xe2\x80\xae"), std::string::npos) << "bidi override";
}

TEST(HostileNames, ErrorsQuotingAConfigFileKeepEscapesFromTheTerminal) {
  // An unknown key is quoted back in the error: the key holds the escapes.
  const std::string path = ::testing::TempDir() + "/hostile-config.toml";
  std::ofstream(path) << "[thresholds]\n\"\\u001b]0;PWNED\\u0007\\u001b[2J\\u009b31m\" = 1\n";
  const auto r = run_gpulens(fmt::format("diagnose --config '{}' --replay {}", path, kFixture));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_terminal_safe(r.err, "diagnose stderr");
  EXPECT_NE(r.err.find("]0;PWNED"), std::string::npos) << r.err;
}

TEST(HostileNames, PrometheusLabelsReplaceControlsAndBrokenUtf8) {
  const std::string labels = exposition::render_labels({
      {"process",
       "N\x1b]0;PWNED\x07\xc2\x9b"
       "2J\xe2\x80\xae"},
      {"user",
       "a\xff\xfe"
       "b\r\tc"},
      {"pod", "line\nbreak \"q\" \\"},
      {"host", "µs-é-训练"},
  });
  const std::string r(kReplacementCharacter);
  EXPECT_EQ(labels, fmt::format("process=\"N{0}]0;PWNED{0}{0}2J{0}\",user=\"a{0}{0}b{0}{0}c\","
                                "pod=\"line\\nbreak \\\"q\\\" \\\\\",host=\"µs-é-训练\"",
                                r));
  EXPECT_TRUE(is_terminal_safe(labels, false));
}

}  // namespace
}  // namespace gpulens

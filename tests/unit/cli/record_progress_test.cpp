// SPDX-License-Identifier: Apache-2.0
// `gpulens record`'s progress line (issue 48): its words, shown on a terminal
// (a pseudo-terminal from script(1)) and never written to a file or a pipe.
#include "cli/record_progress.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "cli_support.hpp"
#include "core/text_units.hpp"

namespace gpulens::cli {
namespace {

TEST(RecordProgress, LineSaysSamplesGpusSizeAndTime) {
  EXPECT_EQ(record_progress_line(1234567, 2, 3 * 1024 * 1024 + 512 * 1024, 83),
            "recording: 1,234,567 samples, 2 GPUs, 3.5 MiB, " + duration_text(83));
  EXPECT_EQ(record_progress_line(1, 1, 2048, 0.5).rfind("recording: 1 sample, 1 GPU, 2 KiB, ", 0),
            0u);
}

std::string recording_path(const char* name) {
  return ::testing::TempDir() + "/record_progress_" + name + ".trace.jsonl";
}

TEST(RecordProgress, QuietWhenStderrIsNotATerminal) {
  const std::string out = recording_path("pipe");
  const auto r = testing::run_gpulens(
      "record --replay examples/calibration-h100.trace.jsonl "
      "--speed 0 -o '" +
      out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("recording: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("wrote "), std::string::npos) << r.err;
  std::remove(out.c_str());
}

TEST(RecordProgress, ShownOnATerminal) {
  // script(1) is in bsdutils, which every Debian system has: missing, the test fails.
  ASSERT_EQ(std::system("command -v script >/dev/null 2>&1"), 0) << "no script(1) (bsdutils)";
  const std::string out = recording_path("tty");
  const std::string log = ::testing::TempDir() + "/record_progress_tty.log";
  // script(1) runs the command on a pseudo-terminal and copies what it wrote.
  const std::string cmd = std::string("cd '") + GPULENS_SOURCE_DIR + "' && script -qec \"'" +
                          GPULENS_BINARY +
                          "' record --replay examples/calibration-h100.trace.jsonl --speed 0 -o '" +
                          out + "'\" /dev/null </dev/null >'" + log + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(log);
  const std::string text = testing::read_file(log);
  EXPECT_NE(text.find("\rrecording: "), std::string::npos) << text;
  EXPECT_NE(text.find(", 1 GPU, "), std::string::npos) << text;
  // Erased before the closing line, which starts clean.
  EXPECT_NE(text.find("\r\033[Kgpulens: wrote "), std::string::npos) << text;
  std::remove(out.c_str());
  std::remove(log.c_str());
}

}  // namespace
}  // namespace gpulens::cli

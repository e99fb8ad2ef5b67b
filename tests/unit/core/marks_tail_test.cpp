// SPDX-License-Identifier: Apache-2.0
// The marks file a job appends to, read as it grows: whole new lines only, a
// line that is not JSON counted and skipped, reading bounded by a limit that is
// said, and a FIFO or device refused without blocking on it.
#include "core/marks_tail.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace gpulens {
namespace {

std::string tail_path(const std::string& name) {
  return ::testing::TempDir() + "/gpulens-marks-tail-" + name;
}

TEST(MarksTail, AFifoOrADeviceIsRefusedWithoutBlocking) {
  const std::string fifo = tail_path("tail.fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  MarksTail tail(fifo);
  EXPECT_TRUE(tail.poll(1.0).empty());  // returns: no writer is waited for
  EXPECT_EQ(tail.refused(), "not a regular file (a FIFO)");
  std::remove(fifo.c_str());
  MarksTail zero("/dev/zero");
  EXPECT_TRUE(zero.poll(1.0).empty());
  EXPECT_EQ(zero.refused(), "not a regular file (a character device)");
  MarksTail missing(tail_path("not-yet"));  // may still be created: not refused
  EXPECT_TRUE(missing.poll(1.0).empty());
  EXPECT_EQ(missing.refused(), "");
}

TEST(MarksTail, ReadingStopsAtTheLimitAndSaysSo) {
  const std::string path = tail_path("tail.big");
  const std::string line = "{\"mark\":\"step\",\"t\":1}\n";  // 23 bytes
  std::ofstream(path, std::ios::binary) << line << line << "garbage\n";
  MarksTail exact(path, 2 * line.size() + 8);  // all of it: not truncated
  EXPECT_EQ(exact.poll(1.0).size(), 2u);
  EXPECT_EQ(exact.bad_lines(), 1u);
  EXPECT_FALSE(exact.truncated());
  MarksTail tail(path, 2 * line.size());
  EXPECT_EQ(tail.poll(1.0).size(), 2u);
  EXPECT_TRUE(tail.truncated());
  std::ofstream(path, std::ios::app) << line;
  EXPECT_TRUE(tail.poll(1.0).empty());  // nothing more is read past the limit
  std::remove(path.c_str());
}

TEST(MarksTail, ReadsOnlyCompleteNewLines) {
  const std::string path = tail_path("marks.jsonl");
  std::remove(path.c_str());
  MarksTail tail(path);
  EXPECT_TRUE(tail.poll(1.0).empty()) << "a missing file is not an error";
  {
    std::ofstream out(path);
    out << R"({"t": 5.5, "mark": "train:start"})"
           "\n"
        << R"({"mark": "step", "flops": 1e12})"
        << "\n"
        << "not json\n"
        << R"({"mark": "partial)";
  }
  auto marks = tail.poll(7.0);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].t, 5.5);
  EXPECT_EQ(marks[1].t, 7.0) << "a mark without t gets the time it was seen";
  EXPECT_EQ(marks[1].fields["flops"], 1e12);
  EXPECT_EQ(tail.bad_lines(), 1u);
  std::ofstream(path, std::ios::app) << "\"}\n";
  marks = tail.poll(8.0);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].name, "partial");
}

}  // namespace
}  // namespace gpulens

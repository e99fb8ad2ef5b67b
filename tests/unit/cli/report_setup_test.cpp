// SPDX-License-Identifier: Apache-2.0
// Where a report goes: a file is replaced whole (a reader never sees half of one);
// a device or a pipe is written in place, never replaced by a file (as root,
// `-o /dev/null` once turned /dev/null itself into a regular file).
#include "cli/report_setup.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpulens::cli {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/report_write_" + std::to_string(getpid()) + "_" + name;
}

TEST(ReportWrite, AFileIsReplacedWhole) {
  const std::string path = temp_path("report.txt");
  { std::ofstream(path) << "an older, longer report\n"; }
  ASSERT_TRUE(write_report("new\n", path));
  std::ifstream in(path);
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), "new\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove(path);
}

TEST(ReportWrite, APipeIsWrittenInPlaceNotReplaced) {
  const std::string path = temp_path("report.fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  // A reader that does not block, so that the writer's open succeeds at once.
  const int reader = open(path.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(write_report("through the pipe\n", path));
  char buf[64] = {};
  const ssize_t n = read(reader, buf, sizeof buf - 1);
  close(reader);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), "through the pipe\n");
  EXPECT_EQ(std::filesystem::status(path).type(), std::filesystem::file_type::fifo);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
// Files gpulens reads where others can write (marks, kernel records, configs):
// only a regular file opens (a link to one is fine, but not in a directory the
// job can write), a FIFO never blocks the open, a missing file says so, and a
// whole-file read is refused past its limit.
#include "core/regular_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpulens {
namespace {

// A fresh directory per test, removed at its end.
class RegularFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/gpulens-regular-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
  }
  std::string dir_;
};

TEST_F(RegularFile, AFileAndALinkToOneOpen) {
  write("marks.jsonl", "{}\n");
  std::filesystem::create_symlink(path("marks.jsonl"), path("link"));
  for (const char* name : {"marks.jsonl", "link"}) {
    bool missing = true;
    const auto fd = open_regular_file(path(name), &missing);
    ASSERT_TRUE(fd) << name << ": " << fd.error().message;
    EXPECT_FALSE(missing);
    EXPECT_NE(::fcntl(*fd, F_GETFD) & FD_CLOEXEC, 0) << "a child must not inherit it";
    ::close(*fd);
  }
}

TEST_F(RegularFile, WhatIsNotARegularFileIsNamed) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  std::filesystem::create_directory(path("dir"));
  const auto fifo = open_regular_file(path("fifo"));  // returns: no writer is waited for
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().message, "not a regular file (a FIFO)");
  const auto dir = open_regular_file(path("dir"));
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message, "not a regular file (a directory)");
  const auto zero = open_regular_file("/dev/null");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "not a regular file (a character device)");
}

TEST_F(RegularFile, AMissingFileSaysItIsMissing) {
  bool missing = false;
  const auto fd = open_regular_file(path("not-yet"), &missing);
  ASSERT_FALSE(fd);
  EXPECT_TRUE(missing);
  EXPECT_EQ(fd.error().message, "No such file or directory");
  write("there", "x");
  ::chmod(path("there").c_str(), 0);
  missing = true;
  if (::geteuid() != 0) {  // root opens it all the same
    EXPECT_FALSE(open_regular_file(path("there"), &missing));
    EXPECT_FALSE(missing) << "a file that exists but cannot be read is not missing";
  }
}

TEST_F(RegularFile, InADirectoryALinkIsRefused) {
  write("records.json", "{}");
  std::filesystem::create_symlink("/etc/passwd", path("kernels-1.json"));
  const int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  const auto plain = open_regular_file_at(dir, "records.json");
  ASSERT_TRUE(plain) << plain.error().message;
  ::close(*plain);
  const auto link = open_regular_file_at(dir, "kernels-1.json");
  ASSERT_FALSE(link);
  EXPECT_EQ(link.error().message, "not a regular file (a symbolic link)");
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  const auto fifo = open_regular_file_at(dir, "fifo");
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().message, "not a regular file (a FIFO)");
  ::close(dir);
}

TEST_F(RegularFile, AWholeReadStopsAtItsLimit) {
  const std::string text(100 * 1024, 'x');  // more than one read of the loop
  write("big", text);
  const auto whole = read_regular_file(path("big"), text.size());
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(*whole, text);
  const auto over = read_regular_file(path("big"), text.size() - 1);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().message, "larger than 102399 bytes");
  write("empty", "");
  const auto empty = read_regular_file(path("empty"), 0);
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, "");
  EXPECT_FALSE(read_regular_file(path("missing"), 10));
}

}  // namespace
}  // namespace gpulens

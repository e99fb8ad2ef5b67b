// SPDX-License-Identifier: Apache-2.0
// The directories a job writes its records into: listed and removed through the
// descriptor gpulens holds, so that a path the job swapped redirects nothing.
#include "cli/records_dir.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace gpulens::cli {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path p =
      fs::path(::testing::TempDir()) / ("records_dir_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

TEST(RecordsDir, ListsTheNamesOfTheAskedExtensionsSorted) {
  const fs::path dir = scratch("list");
  std::string why;
  const auto fd = make_records_dir((dir / "a" / "b").string(), why);
  ASSERT_TRUE(fd) << why;
  for (const char* n : {"z.json", "a.json", "m.jsonl", "x.tmp", "y.txt"}) {
    std::ofstream(dir / "a" / "b" / n) << "{}";
  }
  EXPECT_EQ(list_records(*fd, {".json", ".jsonl"}),
            (std::vector<fs::path>{"a.json", "m.jsonl", "z.json"}));
  EXPECT_EQ(list_records(*fd, {".tmp"}), std::vector<fs::path>{"x.tmp"});
  EXPECT_TRUE(list_records(-1, {".json"}).empty());
  fs::remove_all(dir);
}

TEST(RecordsDir, ADirectoryThatCannotBeMadeSaysWhy) {
  const fs::path file = scratch("file");
  std::ofstream(file) << "x";
  std::string why;
  EXPECT_FALSE(make_records_dir((file / "sub").string(), why));
  EXPECT_FALSE(why.empty());
  fs::remove(file);
}

TEST(RecordsDir, ASwappedPathIsNotRemoved) {
  const fs::path dir = scratch("swap");
  std::string why;
  const auto fd = make_records_dir(dir.string(), why);
  ASSERT_TRUE(fd) << why;
  fs::rename(dir, dir.string() + ".moved");
  fs::create_directories(dir);  // another directory where the held one was
  remove_records_dir(dir.string(), *fd);
  EXPECT_TRUE(fs::exists(dir));
  fs::remove(dir);
  fs::rename(dir.string() + ".moved", dir);
  remove_records_dir(dir.string(), *fd);
  EXPECT_FALSE(fs::exists(dir)) << "the held directory, empty, goes";
}

}  // namespace
}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
// FileBuffer and KeptOpenFile on ordinary files in a temp dir (procfs regenerates its
// files on each read from offset 0; an ordinary file rewritten in place stands in).
#include "sources/host/file_buffer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpulens::sources {
namespace {

namespace fs = std::filesystem;

class TempFile {
 public:
  TempFile() {
    std::string tmpl = (fs::temp_directory_path() / "gpulens-file-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    path_ = (fs::path(dir_) / "stat").string();
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void rewrite_in_place(const std::string& text) const {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
  }
  void replace(const std::string& text) const {
    const std::string next = path_ + ".new";
    std::ofstream(next, std::ios::binary) << text;
    fs::rename(next, path_);
  }
  void remove() const { fs::remove(path_); }
  const char* path() const { return path_.c_str(); }

 private:
  std::string dir_;
  std::string path_;
};

TEST(FileBuffer, ReadsWholeFileAndCapsRunawayOnes) {
  TempFile file;
  const std::string big(10000, 'x');  // more than the first 4 KiB buffer
  file.rewrite_in_place(big);
  FileBuffer buffer;
  ASSERT_EQ(buffer.read(file.path()), 0);
  EXPECT_EQ(buffer.view(), big);
  ASSERT_EQ(buffer.read(file.path(), 100), 0);
  EXPECT_EQ(buffer.view().size(), 100U);
}

TEST(FileBuffer, MissingFileIsAnErrnoAndAnEmptyView) {
  TempFile file;
  FileBuffer buffer;
  file.rewrite_in_place("old");
  ASSERT_EQ(buffer.read(file.path()), 0);
  file.remove();
  EXPECT_EQ(buffer.read(file.path()), ENOENT);
  EXPECT_TRUE(buffer.view().empty());
}

class KeptOpenFileTest : public ::testing::Test {
 protected:
  // Reads through the kept descriptor; the text read, or "" on error.
  std::string read() {
    return kept.read(file.path(), buffer) == 0 ? std::string(buffer.view()) : "";
  }

  TempFile file;
  KeptOpenFile kept;
  FileBuffer buffer;
};

TEST_F(KeptOpenFileTest, RewindsAndReadsWhatIsThereNow) {
  file.rewrite_in_place("cpu 1 2 3\n");
  EXPECT_EQ(read(), "cpu 1 2 3\n");
  file.rewrite_in_place("cpu 4 5\n");  // shorter: nothing of the first read may remain
  EXPECT_EQ(read(), "cpu 4 5\n");
}

TEST_F(KeptOpenFileTest, KeepsItsDescriptorAcrossReads) {
  file.rewrite_in_place("first");
  EXPECT_EQ(read(), "first");
  // A file replaced by rename is another inode; the kept descriptor still reads the
  // first one, which shows that no new open happened (procfs files are never renamed).
  file.replace("second");
  EXPECT_EQ(read(), "first");
}

TEST_F(KeptOpenFileTest, MissingFileIsReportedAndFoundOnceItAppears) {
  EXPECT_EQ(kept.read(file.path(), buffer), ENOENT);
  file.rewrite_in_place("now here");
  EXPECT_EQ(read(), "now here");
}

}  // namespace
}  // namespace gpulens::sources

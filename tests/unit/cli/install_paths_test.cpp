// SPDX-License-Identifier: Apache-2.0
// Where gpulens finds the files it ships, worked out from the binary's own place:
// the example recording its --help names, and the injection library of
// `gpulens run --kernels`, in an install (bin/, share/gpulens, lib/gpulens), in a
// build tree, and where neither is there.
#include "cli/install_paths.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/kernels_setup.hpp"
#include "cli_support.hpp"

namespace gpulens {
namespace {

namespace fs = std::filesystem;

class InstallPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("install_paths_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void touch(const fs::path& p, const std::string& text = "x\n") {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

  fs::path root_;
};

constexpr const char* kExample = "examples/calibration-h100.trace.jsonl";

TEST_F(InstallPaths, AnInstalledBinaryNamesTheExampleOfItsOwnPrefix) {
  touch(root_ / "usr/share/gpulens" / kExample);
  EXPECT_EQ(cli::example_recording_for(root_ / "usr/bin/gpulens"),
            (root_ / "usr/share/gpulens" / kExample).string());
}

TEST_F(InstallPaths, ABuildTreeNamesTheExampleOfItsSourceTree) {
  const fs::path source = root_ / "src-tree";
  touch(source / kExample);
  touch(root_ / "build/release/CMakeCache.txt",
        "# This is the CMakeCache file.\nCMAKE_BUILD_TYPE:STRING=Release\n"
        "CMAKE_HOME_DIRECTORY:INTERNAL=" +
            source.string() + "\n");
  EXPECT_EQ(cli::example_recording_for(root_ / "build/release/gpulens"),
            (source / kExample).string());
}

TEST_F(InstallPaths, WithoutEitherTheInstalledPathIsNamed) {
  // A bare binary copied somewhere: the help says where an install puts the file.
  EXPECT_EQ(cli::example_recording_for(root_ / "opt/bin/gpulens"),
            (root_ / "opt/share/gpulens" / kExample).string());
  // A build tree whose source tree lacks the file does not name a missing file there.
  touch(root_ / "b/CMakeCache.txt", "CMAKE_HOME_DIRECTORY:INTERNAL=" + (root_ / "gone").string());
  EXPECT_EQ(cli::example_recording_for(root_ / "b/gpulens"),
            (root_ / "share/gpulens" / kExample).string());
}

TEST_F(InstallPaths, TheBuiltBinaryHelpNamesTheRepositoryExample) {
  // This suite's gpulens runs from its build tree: its help names the source
  // tree's example, a file that exists.
  const auto r = testing::run_gpulens("--help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string expected =
      (fs::path(GPULENS_SOURCE_DIR) / kExample).lexically_normal().string();
  EXPECT_NE(r.out.find("gpulens report " + expected + "\n"), std::string::npos) << r.out;
}

TEST_F(InstallPaths, TheKernelsLibraryIsFoundBesideTheBinaryOrInLibGpulens) {
  const fs::path bin = root_ / "usr/bin";
  fs::create_directories(bin);
  EXPECT_EQ(cli::find_kernels_library(bin.string()), "");
  touch(root_ / "usr/lib/gpulens/libgpulens_kernels.so");
  EXPECT_EQ(cli::find_kernels_library(bin.string()),
            (root_ / "usr/lib/gpulens/libgpulens_kernels.so").string());
  // A build tree keeps it beside the binary, which comes first.
  touch(bin / "libgpulens_kernels.so");
  EXPECT_EQ(cli::find_kernels_library(bin.string()), (bin / "libgpulens_kernels.so").string());
}

TEST_F(InstallPaths, ADirectoryNamedLikeTheLibraryIsNotTheLibrary) {
  fs::create_directories(root_ / "bin/libgpulens_kernels.so");
  EXPECT_EQ(cli::find_kernels_library((root_ / "bin").string()), "");
}

}  // namespace
}  // namespace gpulens

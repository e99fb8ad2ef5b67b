// SPDX-License-Identifier: Apache-2.0
// `gpulens run`'s launch counts: the library put first in the job's LD_PRELOAD, and
// the records the job's processes left taken into the recording, checked, whatever
// the job wrote there.
#include "cli/launches_setup.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/records_dir.hpp"
#include "kernels/record/launch_record.hpp"

namespace gpulens::cli {
namespace {

namespace fs = std::filesystem;

TEST(PrependPreload, TheLibraryGoesFirstBeforeWhatIsThere) {
  EnvList env = {{"A", "1"}, {"LD_PRELOAD", "/x/kernels.so:/user.so"}};
  prepend_preload(env, "/x/launches.so");
  EXPECT_EQ(env[1].second, "/x/launches.so:/x/kernels.so:/user.so");
  EnvList empty_value = {{"LD_PRELOAD", ""}};
  prepend_preload(empty_value, "/x/launches.so");
  EXPECT_EQ(empty_value[0].second, "/x/launches.so");
}

TEST(PrependPreload, WithoutOneInTheListGpulensOwnIsKept) {
  const char* before = std::getenv("LD_PRELOAD");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("LD_PRELOAD", "/user.so", 1);
  EnvList env;
  prepend_preload(env, "/x/launches.so");
  if (before != nullptr) {
    ::setenv("LD_PRELOAD", saved.c_str(), 1);
  } else {
    ::unsetenv("LD_PRELOAD");
  }
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0].second, "/x/launches.so:/user.so");
}

struct Merge : ::testing::Test {
  fs::path root = fs::path(::testing::TempDir()) / ("launches_setup_" + std::to_string(::getpid()));
  LaunchesSetup setup;
  fs::path trace = root / "trace.jsonl";

  void SetUp() override {
    fs::remove_all(root);
    std::string why;
    setup.records_dir = (root / "launches").string();
    setup.records_dir_fd = make_records_dir(setup.records_dir, why);
    ASSERT_TRUE(setup.records_dir_fd) << why;
    std::ofstream(trace) << "{\"header\":1}\n";
  }
  void TearDown() override { fs::remove_all(root); }

  void file(const std::string& name, const std::string& text) {
    std::ofstream(fs::path(setup.records_dir) / name) << text;
  }
  std::vector<nlohmann::json> merged_lines() {
    std::vector<nlohmann::json> out;
    std::ifstream in(trace);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
  }
};

TEST_F(Merge, EachRecordBecomesALineAndTheDirectoryGoes) {
  kernels::LaunchRecord r;
  r.pid = 12;
  r.first_ns = 1;
  r.written_ns = 2;
  r.final = true;
  r.kernels = {{"k", 3}};
  r.kernel_launches = 3;
  file("launches-12-1.json", kernels::launch_record_line(r) + "\n");
  file("launches-13-1.tmp", "{");  // a process killed while writing
  EXPECT_EQ(merge_launch_records(setup, trace.string()), "");
  const auto lines = merged_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["pid"], 12);
  EXPECT_EQ(lines[0]["kernels"][0]["launches"], 3);
  EXPECT_FALSE(fs::exists(setup.records_dir));
}

TEST_F(Merge, WhatIsNotARecordIsRefusedByName) {
  file("launches-1-1.json", "not json");
  file("launches-2-1.json", "{\"x_launches\":1,\"kernel_launches\":-1}");
  ASSERT_EQ(::mkfifo((fs::path(setup.records_dir) / "launches-3-1.json").c_str(), 0600), 0);
  fs::create_symlink("/etc/passwd", fs::path(setup.records_dir) / "launches-4-1.json");
  EXPECT_EQ(merge_launch_records(setup, trace.string()), "");
  const auto lines = merged_lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["refused"], "launches-1-1.json: not JSON");
  EXPECT_EQ(lines[1]["refused"], "launches-2-1.json: field `kernel_launches` is negative");
  EXPECT_NE(lines[2]["refused"].get<std::string>().find("FIFO"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3]["refused"].get<std::string>().find("link"), std::string::npos) << lines[3];
  EXPECT_TRUE(fs::exists("/etc/passwd"));
}

TEST_F(Merge, AnOversizedFileIsRefusedUnread) {
  file("launches-5-1.json", std::string(kMaxLaunchRecordBytes + 10, ' '));
  EXPECT_EQ(merge_launch_records(setup, trace.string()), "");
  const auto lines = merged_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["refused"], "launches-5-1.json: larger than 2 MiB");
}

TEST_F(Merge, FilesPastTheLimitAreSaidInOneLine) {
  kernels::LaunchRecord r;
  r.first_ns = 1;
  r.written_ns = 2;
  r.kernels = {{"k", 1}};
  r.kernel_launches = 1;
  for (std::size_t i = 0; i < kMaxLaunchRecordFiles + 2; ++i) {
    r.pid = static_cast<std::uint32_t>(i);
    file(fmt::format("launches-{:05}-1.json", i), kernels::launch_record_line(r));
  }
  EXPECT_EQ(merge_launch_records(setup, trace.string()), "");
  const auto lines = merged_lines();
  ASSERT_EQ(lines.size(), kMaxLaunchRecordFiles + 1);
  EXPECT_EQ(lines[kMaxLaunchRecordFiles - 1]["pid"], kMaxLaunchRecordFiles - 1);
  EXPECT_EQ(lines.back()["refused"],
            "launches-04096-1.json and 1 more launch record files not read (at most 4096 files "
            "and 63 MiB are)");
  EXPECT_FALSE(fs::exists(setup.records_dir)) << "every file goes, read or not";
}

TEST_F(Merge, NothingIsMergedWhenCountingWasOff) {
  LaunchesSetup off;
  off.unavailable = "not built";
  EXPECT_EQ(merge_launch_records(off, trace.string()), "");
  EXPECT_TRUE(merged_lines().empty());
}

}  // namespace
}  // namespace gpulens::cli

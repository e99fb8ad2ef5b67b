// SPDX-License-Identifier: Apache-2.0
// When the injection library traces (src/inject/schedule.cpp): the node's windows,
// the fixed layout, and the job's first CUDA start shared through its records
// directory. The spread layout and the environment's form are tested with the
// kernel view (tests/unit/kernels/windows_test.cpp).
#include "inject/schedule.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpulens::inject {
namespace {

constexpr std::int64_t kSec = 1'000'000'000;

std::filesystem::path schedule_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("gpulens-schedule-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(Schedule, TheNodesWindowsAreTwoSecondsEveryTwentyOnTheWallClock) {
  const TraceSchedule s = node_schedule();
  const std::int64_t minute = 1'800'000'000LL / 60 * 60 * kSec;  // a whole minute
  Window w = window_at_or_after(s, minute + 1 * kSec);
  EXPECT_EQ(w.start_ns, minute + 10 * kSec);
  EXPECT_EQ(w.end_ns, minute + 12 * kSec);
  w = window_at_or_after(s, minute + 31 * kSec);  // inside the :30 window
  EXPECT_EQ(w.start_ns, minute + 30 * kSec);
  w = window_at_or_after(s, minute + 53 * kSec);
  EXPECT_EQ(w.start_ns, minute + 70 * kSec);
}

TEST(Schedule, AFixedLayoutOpensEveryPeriodFromItsFirstWindow) {
  TraceSchedule s;
  s.epoch_unix_ns = 100 * kSec;
  s.first_s = 5, s.window_s = 1, s.every_s = 10;
  EXPECT_EQ(window_at_or_after(s, 0).start_ns, 105 * kSec);
  EXPECT_EQ(window_at_or_after(s, 105 * kSec + kSec / 2).start_ns, 105 * kSec);
  EXPECT_EQ(window_at_or_after(s, 106 * kSec).start_ns, 115 * kSec);
  EXPECT_EQ(window_at_or_after(s, 126 * kSec).end_ns, 136 * kSec);
}

TEST(Schedule, TheFirstProcessToStartCudaSetsTheJobsOrigin) {
  const auto dir = schedule_dir("origin");
  EXPECT_EQ(job_origin_ns(dir.string(), 500), 500);
  EXPECT_EQ(job_origin_ns(dir.string(), 900), 500);  // a later process reads it
  EXPECT_TRUE(std::filesystem::exists(dir / kOriginFile));
  // Nothing is left behind but the file itself.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);
  std::filesystem::remove_all(dir);
}

TEST(Schedule, AnOriginTheDirectoryCannotVouchForIsTheProcesssOwnStart) {
  EXPECT_EQ(job_origin_ns("/nonexistent/gpulens-schedule", 700), 700);
  const auto dir = schedule_dir("garbled");
  for (const char* text : {"garbage", "-5", "", "99999999999999999999"}) {
    std::ofstream(dir / kOriginFile) << text;
    EXPECT_EQ(job_origin_ns(dir.string(), 700), 700) << text;
  }
  std::ofstream(dir / kOriginFile) << "800";  // after this process's start
  EXPECT_EQ(job_origin_ns(dir.string(), 700), 700);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpulens::inject

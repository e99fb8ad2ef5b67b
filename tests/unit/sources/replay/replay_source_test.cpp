// SPDX-License-Identifier: Apache-2.0
#include "sources/replay/replay_source.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "core/phase.hpp"

namespace gpulens::sources {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  // Test processes run in parallel under ctest: prefix with the test's own name.
  const std::string path = ::testing::TempDir() + "/" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           name;
  std::ofstream(path) << text;
  return path;
}

const char* kTwoGpuTrace =
    R"({"format": "gpu-trace", "version": 1, "devices": [{"index": 0}, {"index": 1}]})"
    "\n"
    R"({"t": 100.0, "gpu": 0, "gpu_util": 1})"
    "\n"
    R"({"t": 100.0, "gpu": 1, "gpu_util": 2})"
    "\n"
    R"({"t": 100.05, "mark": "a:start"})"
    "\n"
    R"({"t": 100.1, "gpu": 1, "gpu_util": 3})"
    "\n"
    R"({"t": 100.1, "gpu": 0, "gpu_util": 4})"
    "\n"
    R"({"t": 100.2, "mark": "a:end"})"
    "\n";

TEST(ReplaySource, GroupsSamplesOfOneTimeIntoATick) {
  auto source = ReplaySource::open(write_temp("two.jsonl", kTwoGpuTrace), 0, false);
  ASSERT_TRUE(source);
  auto t1 = (*source)->next();
  ASSERT_TRUE(t1 && t1->has_value());
  EXPECT_EQ((*t1)->samples.size(), 2u);
  EXPECT_TRUE((*t1)->marks.empty());
  auto t2 = (*source)->next();
  ASSERT_TRUE(t2 && t2->has_value());
  EXPECT_EQ((*t2)->samples.size(), 2u);
  ASSERT_EQ((*t2)->marks.size(), 1u) << "a mark joins the next tick at or after its time";
  EXPECT_EQ((*t2)->marks[0].name, "a:start");
  auto t3 = (*source)->next();
  ASSERT_TRUE(t3 && t3->has_value()) << "trailing marks still arrive";
  EXPECT_TRUE((*t3)->samples.empty());
  EXPECT_EQ((*t3)->marks[0].name, "a:end");
  auto end = (*source)->next();
  ASSERT_TRUE(end);
  EXPECT_FALSE(end->has_value());
}

TEST(ReplaySource, FiltersGpus) {
  auto source = ReplaySource::open(write_temp("two.jsonl", kTwoGpuTrace), 0, false, {1});
  ASSERT_TRUE(source);
  EXPECT_EQ((*source)->header().devices.size(), 1u);
  auto t1 = (*source)->next();
  ASSERT_EQ((*t1)->samples.size(), 1u);
  EXPECT_EQ((*t1)->samples[0].gpu, 1);
}

TEST(ReplaySource, PacesBySpeedAndStops) {
  // 0.1 s of trace at speed 2 takes about 50 ms.
  auto source = ReplaySource::open(write_temp("two.jsonl", kTwoGpuTrace), 2.0, false);
  ASSERT_TRUE(source);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*source)->next());
  ASSERT_TRUE((*source)->next());
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(elapsed, 0.045);
  (*source)->stop();
  auto after = (*source)->next();
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->has_value());
}

TEST(Phases, PairsStartAndEndMarks) {
  std::vector<Mark> marks{{1, "a:start", {}},           {2, "b:start", {}}, {3, "b:end", {}},
                          {4, "a:end", {{"steps", 3}}}, {5, "c:start", {}}, {6, "step", {}}};
  const auto phases = find_phases(marks, 9.0);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[0].name, "a");
  EXPECT_EQ(phases[0].end, 4);
  EXPECT_EQ(phases[0].end_fields["steps"], 3);
  EXPECT_EQ(phases[1].name, "b");
  EXPECT_EQ(phases[2].end, 9.0) << "an unterminated phase runs to the end of the trace";
}

}  // namespace
}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
// memory_growth's detector on synthetic series: a steady ramp is growth; a
// saw-tooth, a one-time step, noise and short histories are not.
#include "diagnosis/memory_trend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace gpulens::diagnosis {
namespace {

MemoryTrend run(const std::function<double(double)>& mib, double seconds,
                std::optional<double> total = 81559) {
  MemoryTrendTracker tracker;
  for (double t = 0; t <= seconds; t += 1) tracker.add(t, mib(t));
  return tracker.analyze(total);
}

TEST(MemoryTrend, SteadyRampIsGrowthWithAForecast) {
  const auto tr = run([](double t) { return 10000 + 10 * t; }, 300);
  EXPECT_TRUE(tr.growing) << tr.why_not;
  EXPECT_NEAR(tr.slope_mib_s, 10, 0.1);
  EXPECT_GT(tr.r2, 0.99);
  ASSERT_TRUE(tr.time_to_oom_s.has_value());
  EXPECT_NEAR(*tr.time_to_oom_s, (81559 - 13000) / 10.0, 60);
}

TEST(MemoryTrend, ChunkyLeakIsStillGrowth) {
  // The caching allocator grows in 20 MiB segments every few seconds.
  const auto tr = run([](double t) { return 8000 + 20 * std::floor(t / 3); }, 300);
  EXPECT_TRUE(tr.growing) << tr.why_not;
}

TEST(MemoryTrend, GrowthAfterALongFlatStretchIsSeenFromItsOnset) {
  // Eight flat minutes, then a leak: judged on the leak, not the average.
  const auto tr = run([](double t) { return t < 480 ? 6000 : 6000 + 15 * (t - 480); }, 570);
  EXPECT_TRUE(tr.growing) << tr.why_not;
  EXPECT_NEAR(tr.slope_mib_s, 15, 1);
}

TEST(MemoryTrend, LeakAfterOtherProcessesCameAndWentIsGrowth) {
  // A job held 2.5 GB and exited; a new one starts and leaks 256 MiB a second.
  const auto tr = run(
      [](double t) {
        if (t < 200) return 3000.0;
        if (t < 400) return 500.0;
        return 1000.0 + 256 * (t - 400);
      },
      470);
  EXPECT_TRUE(tr.growing) << tr.why_not;
  ASSERT_TRUE(tr.time_to_oom_s.has_value());
}

TEST(MemoryTrend, SawToothIsNotGrowth) {
  const auto tr = run([](double t) { return 10000 + 200 * std::fmod(t, 30.0); }, 600);
  EXPECT_FALSE(tr.growing);
}

TEST(MemoryTrend, SlowSawToothAcrossBucketsIsNotGrowth) {
  // Rises for two minutes, frees, rises again: each rise looks steady alone.
  const auto tr = run([](double t) { return 10000 + 50 * std::fmod(t, 150.0); }, 600);
  EXPECT_FALSE(tr.growing);
}

TEST(MemoryTrend, OneTimeAllocationIsNotGrowth) {
  const auto tr = run([](double t) { return t < 120 ? 2000 : 42000; }, 600);
  EXPECT_FALSE(tr.growing);
  const auto loading = run([](double t) { return t < 20 ? 2000 + 1000 * t : 22000; }, 600);
  EXPECT_FALSE(loading.growing) << loading.why_not;
}

TEST(MemoryTrend, FlatNoiseIsNotGrowth) {
  const auto tr = run([](double t) { return 10000 + 30 * std::sin(t * 0.7); }, 600);
  EXPECT_FALSE(tr.growing);
}

TEST(MemoryTrend, NeedsEnoughHistory) {
  const auto tr = run([](double t) { return 10000 + 50 * t; }, 40);
  EXPECT_FALSE(tr.growing);
  EXPECT_NE(tr.why_not.find("shorter"), std::string::npos) << tr.why_not;
}

TEST(MemoryTrend, FarAwayOutOfMemoryIsNotUrgent) {
  // 0.5 MiB/s on 80 GB from 10 GB: about 39 hours.
  const auto tr = run([](double t) { return 10000 + 0.5 * t; }, 600);
  EXPECT_FALSE(tr.growing);
}

}  // namespace
}  // namespace gpulens::diagnosis

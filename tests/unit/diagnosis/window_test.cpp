// SPDX-License-Identifier: Apache-2.0
// The sliding window: eviction, restart at a level shift, none for a duty cycle
// (job grouping: job_groups_test.cpp).
#include "diagnosis/window.hpp"

#include <gtest/gtest.h>

#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::proc;

Sample sample(double t, double util, double sm) {
  Sample s;
  s.t = t;
  s.values.set(Metric::GpuUtil, util);
  s.values.set(Metric::SmActive, sm);
  return s;
}

TEST(Window, KeepsOnlyTheWindowLength) {
  SampleWindow w(WindowSettings{}, HardwareLimits{});  // 5 s by default
  for (int i = 0; i < 200; ++i) w.push(sample(0.1 * i, 50, 40));
  EXPECT_LE(w.size(), 51u);
  EXPECT_NEAR(w.stats().end - w.stats().start, 4.9, 0.11);
  EXPECT_DOUBLE_EQ(*w.stats().get(Metric::GpuUtil), 50);
}

TEST(Window, RestartsAtALevelShiftOnceTheNewLevelHeldOneSecond) {
  SampleWindow w(WindowSettings{}, HardwareLimits{});
  for (int i = 0; i < 40; ++i) w.push(sample(0.1 * i, 99, 95));
  for (int i = 40; i < 45; ++i) w.push(sample(0.1 * i, 0, 0));
  EXPECT_EQ(w.restarts(), 0u);  // half a second of a new level: not yet
  for (int i = 45; i < 52; ++i) w.push(sample(0.1 * i, 0, 0));
  EXPECT_EQ(w.restarts(), 1u);
  EXPECT_DOUBLE_EQ(*w.stats().get(Metric::SmActive), 0);
}

TEST(Window, LagSamplesBetweenLevelsAreDroppedWithTheOldLevel) {
  SampleWindow w(WindowSettings{}, HardwareLimits{});
  for (int i = 0; i < 40; ++i) w.push(sample(0.1 * i, 99, 93));
  w.push(sample(4.0, 36, 40));  // the counters catch up over a sample or two
  w.push(sample(4.1, 36, 0));
  for (int i = 42; i < 60; ++i) w.push(sample(0.1 * i, 0, 0));
  EXPECT_LT(*w.stats().get(Metric::SmActive), 1.0);
}

TEST(Window, ADutyCycleIsNotALevelShift) {
  SampleWindow w(WindowSettings{}, HardwareLimits{});
  for (int i = 0; i < 300; ++i) {
    const bool on = (i / 5) % 2 == 0;  // 0.5 s on, 0.5 s off
    w.push(sample(0.1 * i, on ? 100 : 0, on ? 90 : 0));
  }
  EXPECT_EQ(w.restarts(), 0u);
  EXPECT_NEAR(*w.stats().get(Metric::GpuUtil), 50, 5);
}

TEST(Window, ResetForgetsEverything) {
  SampleWindow w(WindowSettings{}, HardwareLimits{});
  w.push(sample(1, 50, 50));
  w.reset();
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(w.stats().get(Metric::GpuUtil).has_value());
}

TEST(Window, ThrottleShareAndProcesses) {
  SampleWindow w(WindowSettings{}, HardwareLimits{});
  for (int i = 0; i < 10; ++i) {
    Sample s = sample(0.1 * i, 99, 95);
    s.values.set(Metric::ClockEventReasons, i < 6 ? 4.0 : 1.0);
    s.procs = std::vector<ProcessSample>{proc(1, "a", 100.0), proc(2, "b", 300.0, 80.0)};
    w.push(s);
  }
  EXPECT_DOUBLE_EQ(w.stats().throttle_share, 0.6);
  EXPECT_EQ(w.stats().throttle_reasons, 4u);
  EXPECT_EQ(*w.stats().procs.used_mib, 400);
  EXPECT_EQ(w.stats().procs.top_mem_name, "b");
  EXPECT_EQ(w.stats().procs.top_cpu_pid, 2u);
}

}  // namespace
}  // namespace gpulens::diagnosis

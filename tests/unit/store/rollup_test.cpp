// SPDX-License-Identifier: Apache-2.0
#include "store/rollup.hpp"

#include <gtest/gtest.h>

namespace gpulens::store {
namespace {

StoredSample sample(int gpu, double t, double util, const std::string& state,
                    std::optional<double> reasons = std::nullopt) {
  StoredSample s;
  s.gpu = gpu;
  s.t = t;
  s.values.set(Metric::GpuUtil, util);
  if (reasons) s.values.set(Metric::ClockEventReasons, *reasons);
  s.state = state;
  s.throttled = reasons.has_value();
  return s;
}

TEST(StoreRollup, MinuteOf) {
  EXPECT_EQ(minute_of(120.0), 120);
  EXPECT_EQ(minute_of(179.9), 120);
  EXPECT_EQ(minute_of(1732200059.5), 1732200000);
}

TEST(StoreRollup, MeanMinMaxAndStateCountsPerGpuAndMinute) {
  const std::vector<StoredSample> in = {
      sample(0, 60, 10, "idle"), sample(0, 61, 30, "idle"), sample(0, 62, 50, "compute_bound"),
      sample(1, 61, 99, "compute_bound"), sample(0, 125, 70, "compute_bound")};
  const auto rows = roll_up(in);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].gpu, 0);
  EXPECT_EQ(rows[0].minute, 60);
  EXPECT_EQ(rows[0].n, 3);
  EXPECT_DOUBLE_EQ(*rows[0].mean.get(Metric::GpuUtil), 30);
  EXPECT_DOUBLE_EQ(*rows[0].min.get(Metric::GpuUtil), 10);
  EXPECT_DOUBLE_EQ(*rows[0].max.get(Metric::GpuUtil), 50);
  EXPECT_EQ(rows[0].state_counts.at("idle"), 2);
  EXPECT_EQ(rows[0].state_counts.at("compute_bound"), 1);
  EXPECT_EQ(rows[1].minute, 120);
  EXPECT_EQ(rows[2].gpu, 1);
  // A metric no sample had stays absent in every statistic.
  EXPECT_FALSE(rows[0].mean.has(Metric::SmActive));
  EXPECT_FALSE(rows[0].max.has(Metric::SmActive));
}

TEST(StoreRollup, ClockReasonsAreOredNotAveraged) {
  const auto rows =
      roll_up({sample(0, 0, 1, "", 4.0), sample(0, 1, 1, "", 0x20), sample(0, 2, 1, "")});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].max.get(Metric::ClockEventReasons), 0x24);
  EXPECT_FALSE(rows[0].mean.has(Metric::ClockEventReasons));
  EXPECT_EQ(rows[0].throttled, 2);
  EXPECT_TRUE(rows[0].state_counts.empty());
}

}  // namespace
}  // namespace gpulens::store

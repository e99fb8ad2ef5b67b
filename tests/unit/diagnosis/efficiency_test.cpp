// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/efficiency.hpp"

#include <gtest/gtest.h>

#include "diagnosis/state.hpp"

namespace gpulens::diagnosis {
namespace {

TEST(Efficiency, RatioOfSmActivityToUtilization) {
  EXPECT_DOUBLE_EQ(*efficiency_score(100.0, 0.76), 0.76);
  EXPECT_DOUBLE_EQ(*efficiency_score(48.0, 44.0), 44.0 / 48.0 * 100.0);
  EXPECT_DOUBLE_EQ(*efficiency_score(100.0, 100.0), 100.0);
}

TEST(Efficiency, UndefinedWhenUtilizationNearZero) {
  EXPECT_FALSE(efficiency_score(0.0, 0.0).has_value());
  EXPECT_FALSE(efficiency_score(0.5, 0.3).has_value());
  EXPECT_TRUE(efficiency_score(1.0, 0.3).has_value());
}

TEST(Efficiency, UndefinedWhenEitherValueMissing) {
  EXPECT_FALSE(efficiency_score(std::nullopt, 50.0).has_value());
  EXPECT_FALSE(efficiency_score(50.0, std::nullopt).has_value());
  EXPECT_FALSE(efficiency_score(std::nullopt, std::nullopt).has_value());
}

TEST(Efficiency, CappedAtOneHundredWhenCountersDisagree) {
  // GPM and NVML average over different intervals: SM activity can read above.
  EXPECT_DOUBLE_EQ(*efficiency_score(13.0, 14.3), 100.0);
}

TEST(Efficiency, RejectsNonFiniteInput) {
  EXPECT_FALSE(efficiency_score(std::numeric_limits<double>::quiet_NaN(), 5.0).has_value());
  EXPECT_FALSE(efficiency_score(50.0, std::numeric_limits<double>::infinity()).has_value());
}

TEST(Efficiency, FromSample) {
  Sample s;
  s.values.set(Metric::GpuUtil, 100.0);
  s.values.set(Metric::SmActive, 25.0);
  EXPECT_DOUBLE_EQ(*efficiency_score(s), 25.0);
  s.values.clear(Metric::SmActive);
  EXPECT_FALSE(efficiency_score(s).has_value());
}

TEST(StateVocabulary, IdsRoundTrip) {
  for (const auto s : all_states()) {
    const auto id = state_id(s);
    ASSERT_FALSE(id.empty());
    EXPECT_EQ(state_from_id(id), s) << id;
    EXPECT_FALSE(state_meaning(s).empty()) << id;
  }
  EXPECT_EQ(state_id(GpuState::SmUnderused), "sm_underused");
  EXPECT_EQ(state_id(GpuState::IdleHoldingMemory), "idle_holding_memory");
  // `busy` is a state since issue 44 (kernel time without SM activity).
  EXPECT_EQ(state_from_id("busy"), GpuState::Busy);
  EXPECT_FALSE(state_from_id("busy_bound").has_value());
}

TEST(StateVocabulary, Severities) {
  EXPECT_EQ(severity_from_id("critical"), Severity::Critical);
  EXPECT_EQ(severity_id(Severity::Info), "info");
  EXPECT_FALSE(severity_from_id("fatal").has_value());
}

}  // namespace
}  // namespace gpulens::diagnosis

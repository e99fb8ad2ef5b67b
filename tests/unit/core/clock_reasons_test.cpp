// SPDX-License-Identifier: Apache-2.0
#include "core/clock_reasons.hpp"

#include <gtest/gtest.h>

namespace gpulens {
namespace {

TEST(ClockReasons, DecodesEachBitIntoWords) {
  EXPECT_EQ(clock_reasons_text(0), "none");
  EXPECT_EQ(clock_reasons_text(0x1), "idle");
  EXPECT_EQ(clock_reasons_text(0x4), "power cap (software)");
  EXPECT_EQ(clock_reasons_text(0x8), "slowdown (hardware)");
  EXPECT_EQ(clock_reasons_text(0x20), "thermal slowdown (software)");
  EXPECT_EQ(clock_reasons_text(0x40), "thermal slowdown (hardware)");
  EXPECT_EQ(clock_reasons_text(0x80), "power brake (hardware)");
}

TEST(ClockReasons, MostSevereFirstAndUnknownBitsKept) {
  EXPECT_EQ(clock_reasons_text(0x4 | 0x40), "thermal slowdown (hardware), power cap (software)");
  EXPECT_EQ(clock_reason_short(0x4 | 0x1), "pwr");
  EXPECT_EQ(clock_reason_short(0), "");
  const auto reasons = decode_clock_reasons(0x4 | 0x10000);
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_STREQ(reasons[1].id, "unknown");
  EXPECT_EQ(reasons[1].bit, 0x10000u);
}

TEST(ClockReasons, ThrottlingMaskExcludesBenignStates) {
  EXPECT_EQ(clock_reason::kThrottling & clock_reason::kGpuIdle, 0u);
  EXPECT_EQ(clock_reason::kThrottling & clock_reason::kSyncBoost, 0u);
  EXPECT_NE(clock_reason::kThrottling & clock_reason::kSwPowerCap, 0u);
}

}  // namespace
}  // namespace gpulens

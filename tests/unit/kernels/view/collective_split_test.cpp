// SPDX-License-Identifier: Apache-2.0
// A collective's time split into moving data and waiting for the last rank, on
// hand-made timelines: a slow rank, ranks in step, instances matched by end (a
// dropped one, ranks traced over different spans, the tolerance) and clock skew.
#include "kernels/view/collective_split.hpp"

#include <gtest/gtest.h>

namespace gpulens::kernels {
namespace {

TEST(KernelsCollectiveSplit, TheFastRankWaitsForTheSlowOne) {
  // Each step rank 0 reaches the all-reduce 30 ms late; the data then moves for 10 ms.
  RankTimeline slow{"rank 0", {}}, fast{"rank 1", {}};
  for (int s = 0; s < 10; ++s) {
    const double t = s * 1.0;
    fast.instances.emplace_back(t + 0.100, t + 0.140);
    slow.instances.emplace_back(t + 0.130, t + 0.140);
  }
  const auto split = split_collective_time({slow, fast});
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[1].label, "rank 1");
  EXPECT_NEAR(split[1].waiting_s, 10 * 0.030, 1e-9);
  EXPECT_NEAR(split[1].moving_s, 10 * 0.010, 1e-9);
  ASSERT_TRUE(split[1].waited_for);
  EXPECT_EQ(*split[1].waited_for, 0u);
  EXPECT_NEAR(split[1].waited_for_s, 0.3, 1e-9);
  EXPECT_EQ(split[1].matched, 10u);
  EXPECT_EQ(split[1].unmatched, 0u);
  // The slow rank arrives last: it never waits.
  EXPECT_NEAR(split[0].waiting_s, 0, 1e-12);
  EXPECT_NEAR(split[0].moving_s, 10 * 0.010, 1e-9);
  EXPECT_FALSE(split[0].waited_for);
}

TEST(KernelsCollectiveSplit, RanksInStepOnlyMoveData) {
  RankTimeline a{"GPU 0", {{1.0, 1.2}, {2.0, 2.2}}}, b{"GPU 1", {{1.0, 1.2}, {2.0, 2.2}}};
  const auto split = split_collective_time({a, b});
  for (const auto& r : split) {
    EXPECT_DOUBLE_EQ(r.waiting_s, 0);
    EXPECT_NEAR(r.moving_s, 0.4, 1e-12);
    EXPECT_FALSE(r.waited_for);
  }
}

TEST(KernelsCollectiveSplit, EachInstanceBlamesWhoeverArrivedLast) {
  // Rank 2 is last once by 0.5 s; rank 1 is last twice by 0.1 s: rank 0 waited
  // longest for rank 2, though rank 1 was late more often.
  RankTimeline r0{"rank 0", {{0.0, 1.0}, {2.0, 2.2}, {3.0, 3.2}}};
  RankTimeline r1{"rank 1", {{0.0, 1.0}, {2.1, 2.2}, {3.1, 3.2}}};
  RankTimeline r2{"rank 2", {{0.5, 1.0}, {2.0, 2.2}, {3.0, 3.2}}};
  const auto split = split_collective_time({r0, r1, r2});
  EXPECT_NEAR(split[0].waiting_s, 0.5 + 0.1 + 0.1, 1e-9);
  ASSERT_TRUE(split[0].waited_for);
  EXPECT_EQ(*split[0].waited_for, 2u);
  EXPECT_NEAR(split[0].waited_for_s, 0.5, 1e-9);
  EXPECT_EQ(*split[2].waited_for, 1u);  // rank 2 only ever waited for rank 1
  EXPECT_NEAR(split[1].waiting_s, 0.5, 1e-9);
  EXPECT_EQ(*split[1].waited_for, 2u);
}

TEST(KernelsCollectiveSplit, AnInstanceNoOtherRankShowsIsCountedNotSplit) {
  // Rank 0 has a third collective the others never show (past the cap, dropped,
  // or not traced there): nothing says whom it waited for.
  RankTimeline a{"a", {{0, 1}, {2, 3}, {4, 5}}}, b{"b", {{0, 1}, {2, 3}}}, c{"c", {{0, 1}}};
  const auto split = split_collective_time({a, b, c});
  EXPECT_EQ(split[0].matched, 2u);
  EXPECT_EQ(split[0].unmatched, 1u);
  EXPECT_DOUBLE_EQ(split[0].unmatched_s, 1.0);
  EXPECT_DOUBLE_EQ(split[0].waiting_s, 0);
  EXPECT_DOUBLE_EQ(split[0].moving_s, 2.0);
  EXPECT_FALSE(split[0].waited_for);
  EXPECT_EQ(split[1].matched, 2u);
  EXPECT_EQ(split[1].unmatched, 0u);
  EXPECT_EQ(split[2].matched, 1u);
}

// Ten steps, rank 0 late by 30 ms to each all-reduce that then moves for 10 ms.
RankTimeline step_rank(const char* label, double late_s, int first, int last) {
  RankTimeline t{label, {}};
  for (int s = first; s <= last; ++s) {
    const double at = s * 1.0;
    t.instances.emplace_back(at + 0.100 + late_s, at + 0.140);
  }
  return t;
}

TEST(KernelsCollectiveSplit, ADroppedInstanceOnOneRankShiftsNoOtherMatch) {
  // Rank 1 lost its fourth instance (CUPTI dropped it): by position every later
  // instance of rank 0 would pair with the next step's of rank 1 and read as a
  // wait of a second; by end each pairs with its own.
  RankTimeline slow = step_rank("rank 0", 0.030, 0, 9), fast = step_rank("rank 1", 0, 0, 9);
  fast.instances.erase(fast.instances.begin() + 3);
  const auto split = split_collective_time({slow, fast});
  EXPECT_NEAR(split[1].waiting_s, 9 * 0.030, 1e-9);
  EXPECT_NEAR(split[1].moving_s, 9 * 0.010, 1e-9);
  EXPECT_EQ(split[1].matched, 9u);
  EXPECT_EQ(split[1].unmatched, 0u);
  EXPECT_EQ(*split[1].waited_for, 0u);
  EXPECT_EQ(split[0].matched, 9u);
  EXPECT_EQ(split[0].unmatched, 1u);
  EXPECT_NEAR(split[0].unmatched_s, 0.010, 1e-9);
  EXPECT_NEAR(split[0].waiting_s, 0, 1e-12);
}

TEST(KernelsCollectiveSplit, RanksTracedOverDifferentSpansSplitOnlyWhatBothShow) {
  // Rank 0 traced steps 0-9, rank 1 steps 5-14 (their windows opened apart): by
  // position rank 1's step 5 would pair with rank 0's step 0.
  const RankTimeline slow = step_rank("rank 0", 0.030, 0, 9);
  const RankTimeline fast = step_rank("rank 1", 0, 5, 14);
  const auto split = split_collective_time({slow, fast});
  EXPECT_EQ(split[1].matched, 5u);
  EXPECT_EQ(split[1].unmatched, 5u);
  EXPECT_NEAR(split[1].waiting_s, 5 * 0.030, 1e-9);
  EXPECT_NEAR(split[1].moving_s, 5 * 0.010, 1e-9);
  EXPECT_NEAR(split[1].unmatched_s, 5 * 0.040, 1e-9);
  EXPECT_EQ(split[0].matched, 5u);
  EXPECT_EQ(split[0].unmatched, 5u);
}

TEST(KernelsCollectiveSplit, EndsFurtherApartThanTheToleranceAreTwoCollectives) {
  // Half the shorter instance: a 40 ms collective and the 2 ms one right after it
  // on the same stream end 2 ms apart, more than 1 ms (half of 2 ms).
  EXPECT_DOUBLE_EQ(end_match_tolerance(0.040, 0.002, 0), 0.001);
  EXPECT_DOUBLE_EQ(end_match_tolerance(3.0, 2.0, 0), kMaxEndGapS);  // long ones: at most 1 ms
  EXPECT_DOUBLE_EQ(end_match_tolerance(3.0, 2.0, 0.002), kMaxEndGapS + 0.002);
  RankTimeline a{"a", {{0.0, 3.0}}}, b{"b", {{2.9, 2.9985}}};  // ends 1.5 ms apart
  EXPECT_EQ(split_collective_time({a, b})[0].unmatched, 1u);
  b.instances[0].second = 2.9995;  // 0.5 ms apart: one collective
  const auto split = split_collective_time({a, b});
  EXPECT_EQ(split[0].matched, 1u);
  EXPECT_NEAR(split[0].waiting_s, 2.9, 1e-9);
}

TEST(KernelsCollectiveSplit, SkewWithinTheToleranceIsNoWait) {
  RankTimeline a{"host a", {{10.0000, 10.0100}}}, b{"host b", {{10.0004, 10.0100}}};
  auto split = split_collective_time({a, b}, {.tolerance_s = 1e-3});
  EXPECT_DOUBLE_EQ(split[0].waiting_s, 0);
  EXPECT_NEAR(split[0].moving_s, 0.0100, 1e-12);
  EXPECT_FALSE(split[0].waited_for);
  split = split_collective_time({a, b});  // one host: no tolerance, 0.4 ms is a wait
  EXPECT_NEAR(split[0].waiting_s, 0.0004, 1e-9);
  EXPECT_NEAR(split[0].waiting_s + split[0].moving_s, 0.0100, 1e-12);
}

TEST(KernelsCollectiveSplit, ARankThatEndedBeforeTheLastArrivedWaitedAllOfIt) {
  // Clocks apart (2 ms of skew allowed) by more than the 0.1 ms the data moved:
  // the split stays inside the instance.
  RankTimeline a{"a", {{0.0, 0.010}}}, b{"b", {{0.0115, 0.0116}}};
  const auto split = split_collective_time({a, b}, {.tolerance_s = 2e-3});
  EXPECT_EQ(split[0].matched, 1u);
  EXPECT_NEAR(split[0].waiting_s, 0.010, 1e-12);
  EXPECT_DOUBLE_EQ(split[0].moving_s, 0);
}

TEST(KernelsCollectiveSplit, NoRanksNoSplit) {
  EXPECT_TRUE(split_collective_time({}).empty());
  const auto one = split_collective_time({RankTimeline{"only", {{0, 1}}}});
  ASSERT_EQ(one.size(), 1u);  // no peer: nothing to split against
  EXPECT_DOUBLE_EQ(one[0].moving_s, 0);
  EXPECT_EQ(one[0].unmatched, 1u);
}

}  // namespace
}  // namespace gpulens::kernels

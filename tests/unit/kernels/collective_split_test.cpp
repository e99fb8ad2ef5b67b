// SPDX-License-Identifier: Apache-2.0
// A collective's time split into moving data and waiting for the last rank, on
// hand-made timelines: a slow rank, ranks in step, a hang, unequal counts and
// clock skew within the tolerance.
#include "kernels/collective_split.hpp"

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

TEST(KernelsCollectiveSplit, AHungRankMakesTheOthersWaitThroughTheirLastInstance) {
  // Rank 3 never reaches the third collective; the others sit in it until the
  // job is killed at t = 100 s.
  std::vector<RankTimeline> ranks;
  for (int r = 0; r < 4; ++r) {
    RankTimeline t{"rank " + std::to_string(r), {{1.0, 1.1}, {2.0, 2.1}}};
    if (r != 3) t.instances.emplace_back(3.0, 100.0);
    ranks.push_back(t);
  }
  const auto split = split_collective_time(ranks);
  for (int r = 0; r < 3; ++r) {
    EXPECT_NEAR(split[r].waiting_s, 97.0, 1e-9);
    EXPECT_NEAR(split[r].moving_s, 0.2, 1e-9);
    EXPECT_EQ(split[r].matched, 2u);
    EXPECT_EQ(split[r].unmatched, 1u);
    ASSERT_TRUE(split[r].waited_for);
    EXPECT_EQ(*split[r].waited_for, 3u);
  }
  EXPECT_EQ(split[3].unmatched, 0u);
  EXPECT_DOUBLE_EQ(split[3].waiting_s, 0);
}

TEST(KernelsCollectiveSplit, UnequalTailsBlameTheRankThatStoppedFirst) {
  RankTimeline a{"a", {{0, 1}, {2, 3}, {4, 5}}}, b{"b", {{0, 1}, {2, 3}}}, c{"c", {{0, 1}}};
  const auto split = split_collective_time({a, b, c});
  // Instance 1 on a and b waits for c; instance 2 on a also waits for c, the fewest.
  EXPECT_EQ(split[0].matched, 1u);
  EXPECT_EQ(split[0].unmatched, 2u);
  EXPECT_NEAR(split[0].waiting_s, 2.0, 1e-12);
  EXPECT_EQ(*split[0].waited_for, 2u);
  EXPECT_EQ(split[1].unmatched, 1u);
  EXPECT_EQ(*split[1].waited_for, 2u);
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
  // Clocks apart by more than the collective: the split stays inside the instance.
  RankTimeline a{"a", {{0.0, 0.5}}}, b{"b", {{1.0, 1.5}}};
  const auto split = split_collective_time({a, b});
  EXPECT_NEAR(split[0].waiting_s, 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(split[0].moving_s, 0);
}

TEST(KernelsCollectiveSplit, NoRanksNoSplit) {
  EXPECT_TRUE(split_collective_time({}).empty());
  const auto one = split_collective_time({RankTimeline{"only", {{0, 1}}}});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_DOUBLE_EQ(one[0].moving_s, 1);
}

}  // namespace
}  // namespace gpulens::kernels

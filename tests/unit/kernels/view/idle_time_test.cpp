// SPDX-License-Identifier: Apache-2.0
// Busy and idle over a span (kernels/view/idle_time.hpp): the edges of the span,
// the gap histogram's buckets, and the idle time a sketch closed inside a busy
// span, taken pro rata.
#include "kernels/view/idle_time.hpp"

#include <gtest/gtest.h>

namespace gpulens::kernels {

TEST(KernelsIdle, WindowClipsIntervalsAndCountsEdgeGaps) {
  const std::vector<std::pair<double, double>> busy = {{0, 1}, {2, 3}, {3.5, 6}};
  const IdleStats st = idle_over(busy, 0.5, 4);
  EXPECT_DOUBLE_EQ(st.window_s, 3.5);
  EXPECT_DOUBLE_EQ(st.busy_s, 0.5 + 1 + 0.5);
  EXPECT_NEAR(st.idle_share, 1.5 / 3.5, 1e-12);
  EXPECT_EQ(st.gaps.count[4], 2u);                   // 1 s and 0.5 s
  const IdleStats edge = idle_over({{1, 2}}, 0, 3);  // idle at both ends
  EXPECT_EQ(edge.gaps.count[4], 2u);
  EXPECT_DOUBLE_EQ(edge.busy_s, 1);
}

TEST(KernelsIdle, GapsFallInTheBucketOfTheirLengthWithTheEdgesInTheLongerOne) {
  GapHistogram h;
  h.add(5e-6);    // < 10 us
  h.add(10e-6);   // an edge: 10-100 us
  h.add(0.5e-3);  // 0.1-1 ms
  h.add(1e-3);    // an edge: 1-10 ms
  h.add(0.2);     // > 10 ms
  EXPECT_EQ(h.count, (std::array<std::uint64_t, 5>{1, 1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(h.seconds[4], 0.2);
}

TEST(KernelsIdle, IdleASketchClosedCountsByTheShareOfItsSpanAsked) {
  // Busy 0-10 s as the sketch saw it, with 4 gaps of 0.5 s (2 s) closed inside.
  const std::vector<std::pair<double, double>> busy = {{0, 10}};
  const HiddenIdles hidden = {{0, 10, 4, 2}};
  const IdleStats whole = idle_over(busy, 0, 10, &hidden);
  EXPECT_DOUBLE_EQ(whole.busy_s, 8);
  EXPECT_NEAR(whole.idle_share, 0.2, 1e-12);
  EXPECT_EQ(whole.gaps.count[4], 4u);  // 0.5 s each: > 10 ms
  const IdleStats half = idle_over(busy, 5, 10, &hidden);
  EXPECT_DOUBLE_EQ(half.busy_s, 4);
  EXPECT_EQ(half.gaps.count[4], 2u);
  EXPECT_DOUBLE_EQ(idle_over(busy, 0, 10).busy_s, 10);  // without it: busy throughout
}

}  // namespace gpulens::kernels

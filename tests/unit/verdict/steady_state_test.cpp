// SPDX-License-Identifier: Apache-2.0
// The job's steady state from a diagnosis timeline: each GPU's span between its
// first and last sustained work, the idle before and after it kept apart as
// start-up and tear-down, short work counted only when there is no other, and
// no edges at all for a range of the agent's history.
#include "verdict/steady_state.hpp"

#include <gtest/gtest.h>

#include "diagnosis/timeline.hpp"

namespace gpulens::verdict {
namespace {

using diagnosis::GpuState;

diagnosis::TimelineRun steady_run(int gpu, double start, double end, GpuState state) {
  diagnosis::TimelineRun r;
  r.gpu = gpu;
  r.start = start;
  r.end = end;
  r.state = state;
  return r;
}

TEST(SteadyState, IdleBeforeAndAfterTheWorkIsStartUpAndTearDown) {
  diagnosis::DiagnosisReport report;
  // Out of order on purpose: the runs are sorted per GPU.
  report.timeline = {
      steady_run(0, 90, 100, GpuState::Idle), steady_run(0, 0, 10, GpuState::IdleHoldingMemory),
      steady_run(0, 10, 50, GpuState::ComputeBound), steady_run(0, 50, 60, GpuState::Idle),
      steady_run(0, 60, 90, GpuState::MemoryBound)};
  const auto s = find_steady_state(report);
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuSpan& g = s.gpus[0];
  EXPECT_EQ(g.start, 0);
  EXPECT_EQ(g.end, 100);
  EXPECT_EQ(g.work_start, 10);
  EXPECT_EQ(g.work_end, 90);
  EXPECT_EQ(g.startup_s, 10);
  EXPECT_EQ(g.teardown_s, 10);
  EXPECT_EQ(s.total_s, 100);
  EXPECT_EQ(s.steady_s(), 80);  // idle in the middle is the job's
  EXPECT_EQ(s.steady.seconds[diagnosis::state_index(GpuState::Idle)], 10);
  EXPECT_EQ(s.all.seconds[diagnosis::state_index(GpuState::Idle)], 20);
  EXPECT_EQ(s.edges_s(), 20);
  EXPECT_TRUE(s.in_edges(0, 0, 10));
  EXPECT_TRUE(s.in_edges(0, 92, 95));
  EXPECT_FALSE(s.in_edges(0, 5, 15));  // overlaps the work
  EXPECT_FALSE(s.in_edges(0, 50, 60));
  EXPECT_FALSE(s.in_edges(3, 0, 1)) << "a GPU not on the timeline has no edges";
}

TEST(SteadyState, ABlipOfWorkWhileLoadingIsStartUp) {
  diagnosis::DiagnosisReport report;
  report.timeline = {steady_run(0, 0, 5, GpuState::Idle),
                     steady_run(0, 5, 6, GpuState::ComputeBound),  // under kSustainedWorkS
                     steady_run(0, 6, 20, GpuState::Idle),
                     steady_run(0, 20, 80, GpuState::ComputeBound),
                     steady_run(0, 80, 81, GpuState::MemoryBound)};  // short, but after work
  const auto s = find_steady_state(report);
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].work_start, 20);
  EXPECT_EQ(s.gpus[0].work_end, 80);
  EXPECT_EQ(s.startup_s, 20);
  EXPECT_EQ(s.teardown_s, 1);
}

TEST(SteadyState, OnlyShortWorkIsStillTheWork) {
  diagnosis::DiagnosisReport report;
  report.timeline = {steady_run(0, 0, 4, GpuState::Idle),
                     steady_run(0, 4, 5, GpuState::ComputeBound),
                     steady_run(0, 5, 9, GpuState::Idle), steady_run(0, 9, 11, GpuState::PcieBound),
                     steady_run(0, 11, 12, GpuState::Idle)};
  const auto s = find_steady_state(report);
  EXPECT_EQ(s.gpus[0].work_start, 4);
  EXPECT_EQ(s.gpus[0].work_end, 11);
  EXPECT_EQ(s.startup_s, 4);
  EXPECT_EQ(s.teardown_s, 1);
  EXPECT_EQ(s.steady_s(), 7);
}

TEST(SteadyState, AGpuThatNeverWorkedHasNoEdgesAndTheJobSpansTheOthers) {
  diagnosis::DiagnosisReport report;
  report.timeline = {
      steady_run(0, 0, 100, GpuState::Idle),         steady_run(1, 0, 30, GpuState::Idle),
      steady_run(1, 30, 70, GpuState::ComputeBound), steady_run(1, 70, 100, GpuState::Idle),
      steady_run(2, 0, 50, GpuState::Unknown),       steady_run(2, 50, 90, GpuState::WaitingOnPeer),
      steady_run(2, 90, 100, GpuState::Idle)};
  const auto s = find_steady_state(report);
  ASSERT_EQ(s.gpus.size(), 3u);
  EXPECT_FALSE(s.gpus[0].work_start.has_value());
  EXPECT_EQ(s.gpus[0].startup_s, 0);
  EXPECT_FALSE(s.in_edges(0, 0, 100));
  EXPECT_EQ(s.start, 30);  // GPU 1's first work
  EXPECT_EQ(s.end, 90);    // GPU 2's last
  EXPECT_TRUE(s.any_work());
  EXPECT_EQ(s.startup_s, 30 + 50);
  EXPECT_EQ(s.teardown_s, 30 + 10);
  EXPECT_EQ(s.span(2)->work_start, 50);
  EXPECT_EQ(s.span(5), nullptr);
}

TEST(SteadyState, AHistoryRangeHasNoEdges) {
  diagnosis::DiagnosisReport report;
  report.timeline = {steady_run(0, 0, 10, GpuState::Idle),
                     steady_run(0, 10, 50, GpuState::ComputeBound),
                     steady_run(0, 50, 60, GpuState::Idle)};
  const auto s = find_steady_state(report, false);
  EXPECT_EQ(s.steady_s(), 60);
  EXPECT_EQ(s.edges_s(), 0);
  EXPECT_FALSE(s.in_edges(0, 0, 10));
  EXPECT_EQ(s.start, 10);  // the work is still found
}

TEST(SteadyState, NoTimelineIsNoWork) {
  const auto s = find_steady_state(diagnosis::DiagnosisReport{});
  EXPECT_FALSE(s.any_work());
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_EQ(s.total_s, 0);
  EXPECT_FALSE(is_work_state(GpuState::Idle));
  EXPECT_FALSE(is_work_state(GpuState::IdleHoldingMemory));
  EXPECT_FALSE(is_work_state(GpuState::Unknown));
  EXPECT_TRUE(is_work_state(GpuState::WaitingOnPeer));
}

}  // namespace
}  // namespace gpulens::verdict

// SPDX-License-Identifier: Apache-2.0
// The kernel view's windows against the recording's counters (kernels/view/reconcile.hpp):
// how much of the job's kernel-active time the windows hold, and whether their busy
// share reads as the counters' over the job and each phase.
#include "kernels/view/reconcile.hpp"

#include <gtest/gtest.h>

namespace gpulens::kernels {
namespace {

// One tick a second over [0, seconds): kernels running `active(t)` of each.
template <typename F>
std::vector<CounterTick> ticks_of(int seconds, F active) {
  std::vector<CounterTick> out;
  for (int t = 0; t < seconds; ++t) out.push_back({double(t), double(t + 1), active(t)});
  return out;
}

// The job: 10 s of solid GEMMs, then 10 s of short bursts (10 % busy),
// then 8 s idle; one 2-s window at 3 s, in the GEMM phase.
struct TwoPhaseJob {
  std::vector<CounterTick> ticks = ticks_of(28, [](int t) {
    return t < 10 ? 1.0 : t < 20 ? 0.1 : 0.0;
  });
  Spans windows = {{3, 5}};
  Spans busy = {{0, 10},    {10, 10.1}, {11, 11.1}, {12, 12.1}, {13, 13.1}, {14, 14.1},
                {15, 15.1}, {16, 16.1}, {17, 17.1}, {18, 18.1}, {19, 19.1}};
  std::vector<NamedSpan> phases = {{"gemm", 0, 10}, {"bursts", 10, 20}};
  ReconcileInputs inputs() const {
    return {.ticks = &ticks, .windows = &windows, .busy = &busy, .phases = &phases};
  }
};

TEST(KernelsReconcile, OneWindowInTheBusyPhaseDoesNotStandForTheJob) {
  const TwoPhaseJob job;
  const auto r = reconcile(job.inputs());
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->job.from, 0);
  EXPECT_DOUBLE_EQ(r->job.to, 28);
  EXPECT_DOUBLE_EQ(r->job.windows_s, 2);
  ASSERT_TRUE(r->job.windows_share.has_value());
  EXPECT_DOUBLE_EQ(*r->job.windows_share, 1.0);
  EXPECT_NEAR(r->job.counters_share, 11.0 / 28, 1e-9);  // 10 s + 10 x 0.1 s of 28
  EXPECT_NEAR(r->job.coverage, 2.0 / 11, 1e-9);
  EXPECT_TRUE(r->job.low_coverage());
  EXPECT_TRUE(r->job.shares_differ());
  const std::string clause = reconcile_clause(r->job, false);
  EXPECT_NE(clause.find("cover 18 % of the job's kernel-active time"), std::string::npos) << clause;
  EXPECT_NE(clause.find("the counters saw kernels running 39 % of the time"), std::string::npos)
      << clause;
  EXPECT_NE(clause.find("do not stand for the whole job"), std::string::npos) << clause;
}

TEST(KernelsReconcile, EachPhaseIsCheckedOnItsOwnAndOneNoWindowSawIsSaid) {
  const TwoPhaseJob job;
  const auto r = reconcile(job.inputs());
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->phases.size(), 2u);
  const SpanCheck& gemm = r->phases[0];
  EXPECT_EQ(gemm.name, "gemm");
  EXPECT_NEAR(gemm.coverage, 0.2, 1e-9);
  EXPECT_FALSE(gemm.shares_differ());  // the window reads as its phase
  const SpanCheck& bursts = r->phases[1];
  EXPECT_FALSE(bursts.windows_share.has_value());
  EXPECT_DOUBLE_EQ(bursts.coverage, 0);
  EXPECT_TRUE(bursts.flagged());
  EXPECT_NE(phase_sentence(bursts).find("no trace window fell in it"), std::string::npos);
  EXPECT_NE(phase_sentence(bursts).find("kernels running 10 %"), std::string::npos);
}

TEST(KernelsReconcile, WindowsSpreadOverASteadyJobReadAsItsCounters) {
  // 80 % busy throughout (8 ms of every 10), windows over 60 % of it.
  const auto ticks = ticks_of(20, [](int) { return 0.8; });
  Spans busy;
  for (int i = 0; i < 2000; ++i) busy.emplace_back(i * 0.01, i * 0.01 + 0.008);
  const Spans windows = {{0, 4}, {6, 10}, {12, 16}};
  const auto r = reconcile({.ticks = &ticks, .windows = &windows, .busy = &busy});
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(*r->job.windows_share, 0.8, 1e-6);
  EXPECT_NEAR(r->job.counters_share, 0.8, 1e-9);
  EXPECT_NEAR(r->job.coverage, 0.6, 1e-9);
  EXPECT_FALSE(r->job.flagged());
  EXPECT_EQ(reconcile_clause(r->job, false), "");
}

TEST(KernelsReconcile, AgreeingButFewWindowsAreSaidWithTheJobsFigure) {
  const auto ticks = ticks_of(100, [](int) { return 0.9; });
  const Spans busy = {{0, 100}};
  const Spans windows = {{10, 12}, {30, 32}};
  const auto r = reconcile({.ticks = &ticks, .windows = &windows, .busy = &busy});
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->job.low_coverage());
  EXPECT_FALSE(r->job.shares_differ());  // 100 % against 90 %: within 10 points
  const std::string clause = reconcile_clause(r->job, true);
  EXPECT_NE(clause.find("the trace windows (busy 100 %) cover 4 %"), std::string::npos) << clause;
  EXPECT_NE(clause.find("near the windows' figure"), std::string::npos) << clause;
}

TEST(KernelsReconcile, TheJobStartsAtItsFirstKernelNotAtTheRecordingsStart) {
  // 10 s of Python start-up before any kernel, then 10 s fully busy.
  const auto ticks = ticks_of(20, [](int t) { return t < 10 ? 0.0 : 1.0; });
  const Spans busy = {{10, 20}};
  const Spans windows = {{10, 20}};
  const auto r = reconcile({.ticks = &ticks, .windows = &windows, .busy = &busy});
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->job.from, 10);
  EXPECT_DOUBLE_EQ(r->job.counters_share, 1.0);
  EXPECT_FALSE(r->job.flagged());
}

TEST(KernelsReconcile, CountersWithoutKernelsOrWithoutTicksAreHandled) {
  const std::vector<CounterTick> none;
  const Spans windows = {{0, 2}};
  EXPECT_FALSE(reconcile({.ticks = &none, .windows = &windows}).has_value());
  const auto idle = ticks_of(10, [](int) { return 0.0; });
  const Spans busy = {{0.5, 0.6}};
  const auto r = reconcile({.ticks = &idle, .windows = &windows, .busy = &busy});
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->job.coverage, 2.0 / 10, 1e-9);  // the windows' share of the time
}

TEST(KernelsReconcile, TicksTakeTheirIntervalFromThePreviousSampleOfTheirGpu) {
  std::vector<gpulens::Sample> samples(4);
  samples[0].t = 100, samples[0].gpu = 0, samples[0].values.set(Metric::GpuUtil, 50.0);
  samples[1].t = 100, samples[1].gpu = 1, samples[1].values.set(Metric::GpuUtil, 10.0);
  samples[2].t = 101, samples[2].gpu = 0, samples[2].values.set(Metric::GpuUtil, 150.0);
  samples[3].t = 102, samples[3].gpu = 0;  // no gpu_util: left out, but it ends a tick
  const auto ticks = counter_ticks(samples, 0, 1.0, 90.0);
  ASSERT_EQ(ticks.size(), 2u);
  EXPECT_DOUBLE_EQ(ticks[0].from, 9);
  EXPECT_DOUBLE_EQ(ticks[0].to, 10);
  EXPECT_DOUBLE_EQ(ticks[0].active, 0.5);
  EXPECT_DOUBLE_EQ(ticks[1].active, 1.0);  // clamped
  EXPECT_EQ(counter_ticks(samples, 0, std::nullopt, 90.0).size(), 1u);
}

}  // namespace
}  // namespace gpulens::kernels

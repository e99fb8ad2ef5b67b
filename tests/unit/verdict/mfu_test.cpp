// SPDX-License-Identifier: Apache-2.0
// MFU from work the job reports: step marks of known FLOPs, the phase marks of
// the training reference recording, and the stdout step matcher.
#include "verdict/mfu.hpp"

#include <gtest/gtest.h>

#include "jobs/step_matcher.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::verdict {
namespace {

const std::string kFixtures = GPULENS_FIXTURES;
const std::string kMfuDataDir = std::string(GPULENS_SOURCE_DIR) + "/data";

Mark step(double t, std::optional<double> flops) {
  Mark m;
  m.t = t;
  m.name = "step";
  if (flops) m.fields["flops"] = *flops;
  return m;
}

TEST(ReportMfu, StepMarksRateLeavesOutTheFirstStep) {
  // Steps end at t = 10, 11, 12, 13; the first one's start is unknown.
  const std::vector<Mark> marks = {step(10, 5e14), step(11, 1e15), step(12, 1e15), step(13, 1e15)};
  const auto w = work_from_steps(marks, std::nullopt);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->seconds, 3);
  EXPECT_DOUBLE_EQ(w->flops, 3e15);
  EXPECT_DOUBLE_EQ(w->total_flops, 3.5e15);
  EXPECT_EQ(w->steps, 3);
  EXPECT_DOUBLE_EQ(w->flops_per_s(), 1e15);
  PeakBasis peak;
  peak.total_tflops = 4000;  // e.g. 4 GPUs of 1000 TFLOP/s
  peak.gpus = 4;
  EXPECT_DOUBLE_EQ(mfu_of(*w, peak).value(), 0.25);
}

TEST(ReportMfu, DefaultFlopsFillStepsThatCarryNone) {
  const std::vector<Mark> marks = {step(0, std::nullopt), step(2, std::nullopt)};
  EXPECT_FALSE(work_from_steps(marks, std::nullopt));
  const auto w = work_from_steps(marks, 4e12);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->flops_per_s(), 2e12);
  EXPECT_FALSE(work_from_steps({step(1, 1e12)}, std::nullopt));  // one step: no span
}

TEST(ReportMfu, TrainingReferencePhasesGiveTheScriptsOwnFigures) {
  auto trace = read_trace(kFixtures + "/traces/training-h100.trace.jsonl",
                          TraceReadOptions{.lenient = true});
  ASSERT_TRUE(trace) << trace.error().message;
  auto models = GpuModelTable::load(kMfuDataDir + "/gpu_peaks.json");
  ASSERT_TRUE(models);
  VerdictOptions o;
  o.models = &*models;
  const Verdict v = build_verdict(*trace, o);
  ASSERT_EQ(v.phases.size(), 3u);
  // The script measured 291.0, 36.9 and 267.7 TFLOP/s; the H100 SXM peak is 989.4.
  const double expected[] = {0.2941, 0.0373, 0.2706};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& p = v.phases[i];
    ASSERT_TRUE(p.mfu) << p.name;
    EXPECT_NEAR(*p.mfu, expected[i], 0.0005) << p.name;
    ASSERT_TRUE(p.estimate) << p.name;
  }
  EXPECT_EQ(v.phases[0].name, "train_good");
  EXPECT_NEAR(v.phases[0].work->flops_per_s() / 1e12, 291.0, 0.1);
  // The whole job: every phase's FLOPs over the phases' seconds.
  ASSERT_TRUE(v.mfu.model);
  EXPECT_EQ(v.mfu.work->source, "phase marks");
  EXPECT_EQ(v.mfu.work->steps, 583 + 74 + 135);
  EXPECT_NEAR(*v.mfu.model, 11.98e15 / 60.312 / 989.4e12, 0.001);
  EXPECT_LT(*v.mfu.model_over_job, *v.mfu.model);  // start-up and gaps dilute it
  // The tensor estimate is labelled as such and lands near the model figure
  // (it also counts attention FLOPs, which 6 x params x tokens leaves out).
  EXPECT_NEAR(*v.phases[0].estimate, *v.phases[0].mfu, 0.12);
  EXPECT_LT(*v.phases[1].estimate, 0.1);
}

TEST(ReportMfu, PeakOverrideAndUnknownPeak) {
  auto trace = read_trace(kFixtures + "/traces/training-h100.trace.jsonl",
                          TraceReadOptions{.lenient = true});
  ASSERT_TRUE(trace);
  VerdictOptions o;  // no table
  Verdict v = build_verdict(*trace, o);
  EXPECT_FALSE(v.mfu.model);
  ASSERT_TRUE(v.mfu.work);  // the work is known, the peak is not
  o.peak_tflops = 500;
  v = build_verdict(*trace, o);
  ASSERT_TRUE(v.phases[0].mfu);
  EXPECT_NEAR(*v.phases[0].mfu, 291.0 / 500, 0.001);
}

TEST(StepMatcher, EveryMatchIsAStepAndACounterCountsSteps) {
  auto plain = jobs::StepMatcher::create("^step ", 1e12);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->match("loss 2.3", 1));
  const auto m = plain->match("step 7 loss 2.3", 5);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "step");
  EXPECT_DOUBLE_EQ(m->t, 5);
  EXPECT_DOUBLE_EQ(m->fields["flops"].get<double>(), 1e12);

  auto counted = jobs::StepMatcher::create(R"(step (\d+))", 1e12);
  ASSERT_TRUE(counted);
  EXPECT_DOUBLE_EQ(counted->match("step 10", 1)->fields["flops"].get<double>(), 1e13);
  EXPECT_DOUBLE_EQ(counted->match("step 30", 2)->fields["flops"].get<double>(), 2e13);
  EXPECT_EQ(counted->match("step 40", 3)->fields["steps"].get<long>(), 10);
  EXPECT_EQ(counted->match("step 1", 4)->fields["steps"].get<long>(), 1);  // a new epoch
  EXPECT_FALSE(jobs::StepMatcher::create("(", 1));
}

}  // namespace
}  // namespace gpulens::verdict

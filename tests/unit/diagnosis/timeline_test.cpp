// SPDX-License-Identifier: Apache-2.0
// The diagnosis of a whole recording: ticks from a trace, phase means and
// summaries, alerts (its JSON and text: render/timeline_json_test.cpp and
// render/timeline_text_test.cpp; `gpulens diagnose` end to end:
// cli/cmd_diagnose_test.cpp).
#include "diagnosis/timeline.hpp"

#include <gtest/gtest.h>

#include "core/trace_reader.hpp"
#include "diagnosis/config.hpp"

namespace gpulens::diagnosis {
namespace {

const std::string kCalibration =
    std::string(GPULENS_SOURCE_DIR) + "/examples/calibration-h100.trace.jsonl";

const DiagnosisReport& calibration() {
  static const DiagnosisReport report = [] {
    auto trace = read_trace(kCalibration);
    EXPECT_TRUE(trace.ok());
    return diagnose_trace(*trace, DiagnosisConfig::defaults());
  }();
  return report;
}

TEST(Report, TicksFromTraceKeepMarksBeforeTheirSamples) {
  const auto sample = [](double t, int gpu) {
    Sample s;
    s.t = t;
    s.gpu = gpu;
    return s;
  };
  const auto mark = [](double t, const char* name) {
    Mark m;
    m.t = t;
    m.name = name;
    return m;
  };
  Trace trace;
  trace.samples = {sample(1.0, 0), sample(1.0, 1), sample(2.0, 0)};
  trace.marks = {mark(0.5, "a:start"), mark(1.5, "a:end"), mark(9.0, "late")};
  const auto ticks = ticks_from_trace(trace);
  ASSERT_EQ(ticks.size(), 3u);
  EXPECT_EQ(ticks[0].samples.size(), 2u);
  EXPECT_EQ(ticks[0].marks.size(), 1u);
  EXPECT_EQ(ticks[1].marks.at(0).name, "a:end");
  EXPECT_EQ(ticks[2].samples.size(), 0u);
  EXPECT_EQ(ticks[2].t, 9.0);
}

TEST(Report, PhaseMeansAndSummaries) {
  const auto& rep = calibration();
  const PhaseSummary* gemm = nullptr;
  const PhaseSummary* one_sm = nullptr;
  for (const auto& p : rep.phases) {
    if (p.name == "gemm_bf16") gemm = &p;
    if (p.name == "one_sm") one_sm = &p;
  }
  ASSERT_TRUE(gemm && one_sm);
  EXPECT_NEAR(*gemm->means.get(Metric::TensorActive), 92, 5);
  EXPECT_EQ(gemm->throttle_cause, "power cap (software)");
  EXPECT_NE(one_sm->summary.find("about 1 of 132 SMs"), std::string::npos) << one_sm->summary;
  EXPECT_FALSE(one_sm->fixes.empty());
}

TEST(Report, AlertsOnTheCalibrationRecording) {
  // one_sm and h2d_pcie hold 100 % utilization with almost no SM work for 6 s:
  // past Packet.ai's rules' 30 s they never fire, so none is expected there.
  for (const auto& a : calibration().alerts) {
    EXPECT_FALSE(a.message.empty()) << a.rule;
    EXPECT_GE(a.fired_at, a.since);
  }
}

}  // namespace
}  // namespace gpulens::diagnosis

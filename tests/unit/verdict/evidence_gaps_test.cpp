// SPDX-License-Identifier: Apache-2.0
#include "verdict/evidence_gaps.hpp"

#include <gtest/gtest.h>

namespace gpulens::verdict {
namespace {

using diagnosis::GpuState;

diagnosis::TimelineRun run(double start, double end, GpuState state, double confidence,
                           std::vector<std::string> cannot = {}, int gpu = 0) {
  diagnosis::TimelineRun r;
  r.gpu = gpu;
  r.start = start;
  r.end = end;
  r.state = state;
  r.confidence = confidence;
  r.cannot_tell = std::move(cannot);
  return r;
}

SteadyState steady_over(double start, double end, int gpus = 1) {
  SteadyState s;
  for (int g = 0; g < gpus; ++g) {
    GpuSpan span;
    span.gpu = g;
    span.start = 0;
    span.end = end + 10;
    span.work_start = start;
    span.work_end = end;
    s.gpus.push_back(span);
  }
  return s;
}

TEST(EvidenceGaps, NoneWhenTheEvidenceIsWhole) {
  diagnosis::DiagnosisReport r;
  r.timeline = {run(0, 100, GpuState::ComputeBound, 0.9)};
  EXPECT_TRUE(evidence_gaps(r, steady_over(0, 100), {}).empty());
}

TEST(EvidenceGaps, AMissingCounterNamesWhatWouldSettleIt) {
  diagnosis::DiagnosisReport r;
  r.timeline = {
      run(0, 60, GpuState::HostBound, 0.6,
          {"SM activity not available: GPM needs Hopper or newer (this GPU is Ampere)",
           "without SM activity, tiny kernels (launch_bound) look like waits on the host"}),
      run(60, 100, GpuState::HostBound, 0.8,
          {"no per-process CPU figures: cannot tell a single-threaded input pipeline"})};
  const auto gaps = evidence_gaps(r, steady_over(0, 100), {});
  ASSERT_EQ(gaps.size(), 2u);
  // One gap per kind: the two GPM lines of the first run count once.
  EXPECT_NE(gaps[0].what.find("SM activity not available"), std::string::npos);
  EXPECT_NEAR(gaps[0].share, 0.6, 1e-9);
  EXPECT_NE(gaps[0].settle.find("Hopper"), std::string::npos);
  EXPECT_NE(gaps[1].settle.find("/proc"), std::string::npos);
  EXPECT_NEAR(gaps[1].share, 0.4, 1e-9);
}

TEST(EvidenceGaps, AMomentIsNotTheVerdictsBasis) {
  diagnosis::DiagnosisReport r;
  r.timeline = {run(0, 95, GpuState::ComputeBound, 0.9),
                run(95, 100, GpuState::HostBound, 0.3,
                    {"no per-process CPU figures: cannot tell a single-threaded input pipeline"})};
  EXPECT_TRUE(evidence_gaps(r, steady_over(0, 100), {}).empty());
}

TEST(EvidenceGaps, OnlyTheSteadyStateCounts) {
  // Start-up with no GPM figures (the first seconds of a context) is not the
  // verdict's basis: the steady state starts at 20 s.
  diagnosis::DiagnosisReport r;
  r.timeline = {
      run(0, 20, GpuState::Idle, 0.4, {"PCIe traffic not measured: pcie_bound not judged"}),
      run(20, 100, GpuState::ComputeBound, 0.9)};
  EXPECT_TRUE(evidence_gaps(r, steady_over(20, 100), {}).empty());
}

TEST(EvidenceGaps, LowConfidenceAsksForALongerRunOrTheKernels) {
  diagnosis::DiagnosisReport r;
  r.timeline = {run(0, 8, GpuState::SmUnderused, 0.4)};
  auto gaps = evidence_gaps(r, steady_over(0, 8), {.window_s = 5});
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_NE(gaps[0].settle.find("longer run"), std::string::npos) << gaps[0].settle;

  r.timeline = {run(0, 600, GpuState::SmUnderused, 0.45)};
  gaps = evidence_gaps(r, steady_over(0, 600), {.window_s = 5});
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_NE(gaps[0].settle.find("gpulens run --kernels"), std::string::npos) << gaps[0].settle;
  gaps = evidence_gaps(r, steady_over(0, 600), {.window_s = 5, .kernel_view = true});
  EXPECT_NE(gaps[0].settle.find("kernel view below"), std::string::npos) << gaps[0].settle;
}

TEST(EvidenceGaps, AnUnknownReasonIsStillSaid) {
  diagnosis::DiagnosisReport r;
  r.timeline = {run(0, 100, GpuState::ComputeBound, 0.9, {"something a later version says"})};
  const auto gaps = evidence_gaps(r, steady_over(0, 100), {});
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].what, "something a later version says");
  EXPECT_TRUE(gaps[0].settle.empty());
}

}  // namespace
}  // namespace gpulens::verdict

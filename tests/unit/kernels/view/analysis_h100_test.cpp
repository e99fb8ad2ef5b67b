// SPDX-License-Identifier: Apache-2.0
// The kernel view on real recordings of `gpulens run --kernels` on an H100
// (bench/kernels/device_run.sh, 2026-11-25): examples/train_gpt.py fed as fast
// as it computes, and the same script with a starved input pipeline. What each
// must say follows from how it was run, not from what gpulens printed: the good
// run keeps the GPU busy between its step marks, with the idle time in short
// host stalls; the starved one sleeps on the host in every step, so its idle
// time is in gaps of many milliseconds and the fix is to feed the GPU; both copy
// their batches from pageable host memory.
#include <gtest/gtest.h>

#include <string>

#include "core/trace_reader.hpp"
#include "kernels/view/analysis.hpp"

namespace gpulens::kernels {
namespace {

const std::string kDir = std::string(GPULENS_FIXTURES) + "/kernels/";

KernelView view_of(const std::string& name) {
  auto trace = read_trace(kDir + name);
  EXPECT_TRUE(trace) << (trace ? "" : trace.error().message);
  if (!trace) return {};
  auto view = analyze_kernels(*trace);
  EXPECT_TRUE(view && view->available);
  return view ? *view : KernelView{};
}

bool has(const KernelView& v, const std::string& kind) {
  for (const auto& f : v.findings) {
    if (f.kind == kind) return true;
  }
  return false;
}

// Idle time of the marked steps in gaps of at least 1 ms (the host's), as a share.
double long_gap_share(const IdleStats& idle) {
  const double idle_s = idle.window_s - idle.busy_s;
  return idle_s > 0 ? (idle.gaps.seconds[3] + idle.gaps.seconds[4]) / idle_s : 0;
}

TEST(KernelsH100, AFedTrainingRunKeepsTheGpuBusyBetweenItsSteps) {
  const auto v = view_of("train-good-h100.trace.jsonl");
  ASSERT_FALSE(v.devices.empty());
  const auto& steps = v.devices[0].steps;
  ASSERT_TRUE(steps.has_value());
  EXPECT_EQ(steps->steps, 40u);
  EXPECT_LT(steps->idle.idle_share, 0.2);
  EXPECT_LT(long_gap_share(steps->idle), 0.5) << "most idle time is short host stalls";
  EXPECT_FALSE(has(v, "host_bound"));
  EXPECT_TRUE(has(v, "pageable_copies"));
  ASSERT_FALSE(v.top.empty());
  EXPECT_EQ(v.top[0].sms_used, 132u) << v.top[0].short_name;  // a GEMM covers the GPU
}

TEST(KernelsH100, AStarvedTrainingRunWaitsOnTheHostInLongGaps) {
  const auto v = view_of("train-starved-h100.trace.jsonl");
  ASSERT_FALSE(v.devices.empty());
  const auto& steps = v.devices[0].steps;
  ASSERT_TRUE(steps.has_value());
  EXPECT_GT(steps->idle.idle_share, 0.5);
  EXPECT_GT(long_gap_share(steps->idle), 0.8) << "the idle time is the host's";
  EXPECT_TRUE(has(v, "host_bound"));
  EXPECT_TRUE(has(v, "pageable_copies"));
  EXPECT_NE(v.headline.find("gaps of > 10 ms: the host"), std::string::npos) << v.headline;
}

// Traced in the fixed windows (2 s every 20 s from 10 s in, the default then),
// 2026-11-26 (bench/kernels/device_run.sh, stage sampled; labels written before
// the run in bench/kernels/expected-windows.md): examples/train_gpt.py --seconds 60 --nvtx,
// fed and starved. The windows hold a small part of each job and must tell the
// story a whole-job trace tells.
TEST(KernelsWindowsH100, AFedJobReadsBusyFromItsWindows) {
  const auto v = view_of("windows-good-h100.trace.jsonl");
  EXPECT_TRUE(v.sampling.sampled);
  EXPECT_EQ(v.sampling.windows, 4u);  // at 10, 30, 50 and 70 s of a ~72 s job
  EXPECT_NEAR(v.sampling.traced_s, 8.0, 0.2);
  ASSERT_FALSE(v.devices.empty());
  const auto& steps = v.devices[0].steps;
  ASSERT_TRUE(steps.has_value());
  EXPECT_GE(steps->steps, 100u);  // ~40 steps of 47 ms whole inside each window
  EXPECT_LT(steps->idle.idle_share, 0.15);
  EXPECT_FALSE(has(v, "host_bound"));
  ASSERT_FALSE(v.top.empty());
  EXPECT_EQ(v.top[0].sms_used, 132u) << v.top[0].short_name;
  // The four windows hold a tenth of the job's kernel time, but read as its
  // counters do (88 % over the job): the headline says both.
  ASSERT_EQ(v.reconciliation.size(), 1u);
  const auto& job = v.reconciliation[0].job;
  EXPECT_TRUE(job.low_coverage());
  EXPECT_FALSE(job.shares_differ());
  EXPECT_NEAR(job.counters_share, 0.88, 0.03);
  EXPECT_NE(v.headline.find("near the windows' figure"), std::string::npos) << v.headline;
}

TEST(KernelsWindowsH100, AStarvedJobReadsHostBoundInsideItsDataRange) {
  const auto v = view_of("windows-starved-h100.trace.jsonl");
  EXPECT_TRUE(v.sampling.sampled);
  EXPECT_EQ(v.sampling.windows, 4u);
  ASSERT_FALSE(v.devices.empty());
  const auto& steps = v.devices[0].steps;
  ASSERT_TRUE(steps.has_value());
  EXPECT_GE(steps->steps, 12u);  // 6 or 7 steps of 297 ms whole inside each window
  EXPECT_GT(steps->idle.idle_share, 0.7);
  EXPECT_TRUE(has(v, "host_bound"));
  ASSERT_TRUE(v.nvtx.has_value());
  const RangeRow* data = nullptr;
  for (const auto& r : v.nvtx->ranges) {
    if (r.name == "data") data = &r;
  }
  ASSERT_NE(data, nullptr);
  ASSERT_GT(v.nvtx->window_idle_s, 0);
  EXPECT_GT(data->attributed_idle_s / v.nvtx->window_idle_s, 0.9);
  EXPECT_NE(v.headline.find("inside the NVTX range `data`"), std::string::npos) << v.headline;
  // Starved throughout: the windows (15 % busy) read as the counters over the job.
  ASSERT_EQ(v.reconciliation.size(), 1u);
  EXPECT_FALSE(v.reconciliation[0].job.shares_differ());
  EXPECT_NEAR(v.reconciliation[0].job.counters_share, 0.15, 0.03);
}

}  // namespace
}  // namespace gpulens::kernels

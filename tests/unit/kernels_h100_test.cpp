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
#include "kernels/analysis.hpp"

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

}  // namespace
}  // namespace gpulens::kernels

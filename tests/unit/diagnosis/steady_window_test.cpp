// SPDX-License-Identifier: Apache-2.0
// Classification and fixes on steady synthetic windows built from the physics
// of each case: copies with idle SMs, blips on an idle GPU, empty GPM
// intervals, and the fixes that must lead or must not be offered (issue 11's
// classes; issue 28's evidence gates: tensor-core advice only with an FP pipe
// at work, memory stalls, integer work, a process the GPU waits for, host
// waits by the process's CPU). Hangs are in classifier_test.cpp.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

#include "core/gpm_interval.hpp"
#include "diagnosis/classifier.hpp"
#include "diagnosis/fixes.hpp"
#include "diagnosis/window.hpp"
#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::h100;
using testing::proc;
using Values = std::initializer_list<std::pair<Metric, double>>;

constexpr double kMibPerGbs = 1e9 / 1048576.0;

bool has_text(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

// --- copies ------------------------------------------------------------------

// A 5 s window at 10 Hz; the values hold in every `kernel_every`-th sample
// (interleaved, as blips are), the others read an idle GPU.
WindowStats steady(Values values, std::optional<std::vector<ProcessSample>> procs = std::nullopt,
                   int kernel_every = 1) {
  SampleWindow w(WindowSettings{}, hardware_limits(h100()));
  for (int i = 0; i < 50; ++i) {
    Sample s;
    s.t = 1000 + 0.1 * i;
    for (const auto& [m, v] : values) s.values.set(m, v);
    if (i % kernel_every != 0) {
      s.values.set(Metric::GpuUtil, 0);
      s.values.set(Metric::SmActive, 0);
    }
    s.procs = procs;
    w.push(s);
  }
  return w.stats();
}

StateFinding classify(const WindowStats& w) {
  return classify_state(w, hardware_limits(h100()), Thresholds{}, {}, 5.0);
}

std::vector<std::string> fixes(const StateFinding& f, const WindowStats& w,
                               const FixContext& ctx = {}) {
  return fixes_for_state(f, w, hardware_limits(h100()), ctx);
}

TEST(Copies, PageableCopiesAreCopyTimeNotLaunchBound) {
  // 256 MiB tensor.to('cuda') from pageable memory: 6 GB/s (10 % of Gen5), SMs
  // idle, the Python process at one full core staging the copies.
  const std::vector<ProcessSample> procs{proc(7, "python3", 3000.0, 100.0)};
  const auto w =
      steady({{Metric::GpuUtil, 13}, {Metric::SmActive, 0.0}, {Metric::PcieRxMibs, 6 * kMibPerGbs}},
             procs);
  const auto f = classify(w);
  EXPECT_EQ(f.state, GpuState::PcieBound);
  EXPECT_TRUE(f.facts.copies_host_limited);
  EXPECT_FALSE(f.facts.pcie_saturated);
  const auto fx = fixes(f, w);
  ASSERT_FALSE(fx.empty());
  EXPECT_TRUE(has_text(fx[0], "pinned")) << fx[0];
  EXPECT_TRUE(has_text(fx[0], "non_blocking=True")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(has_text(x, "CUDA Graphs")) << x;
}

TEST(Copies, AnyLinkShareWithIdleSmsIsCopyTime) {
  // 64 KiB copies: 2.5 % of the link. Without CPU figures the copies are not
  // called host-limited, and the fix does not claim so.
  const auto w =
      steady({{Metric::GpuUtil, 8}, {Metric::SmActive, 0.0}, {Metric::PcieRxMibs, 1600}});
  const auto f = classify(w);
  EXPECT_EQ(f.state, GpuState::PcieBound);
  EXPECT_FALSE(f.facts.copies_host_limited);
  EXPECT_TRUE(has_text(fixes(f, w)[0], "Keep data on the GPU"));
  // Copy engines busy while utilization reads 0 are still not idle.
  EXPECT_EQ(classify(steady({{Metric::GpuUtil, 0},
                             {Metric::SmActive, 0.0},
                             {Metric::PcieTxMibs, 9 * kMibPerGbs}}))
                .state,
            GpuState::PcieBound);
  // Driver chatter of a few MiB/s on an idle GPU is idle.
  EXPECT_EQ(
      classify(steady({{Metric::GpuUtil, 0}, {Metric::SmActive, 0.0}, {Metric::PcieRxMibs, 4}}))
          .state,
      GpuState::Idle);
}

TEST(Copies, PinnedCopiesNearTheLinksRateAreSaturated) {
  const std::vector<ProcessSample> procs{proc(7, "python3", 3000.0, 100.0)};
  const auto w = steady({{Metric::GpuUtil, 95},
                         {Metric::SmActive, 0.0},
                         {Metric::PcieRxMibs, 50.8 * 1073741824.0 / 1048576}},
                        procs);
  const auto f = classify(w);
  EXPECT_EQ(f.state, GpuState::PcieBound);
  EXPECT_TRUE(f.facts.pcie_saturated);
  EXPECT_FALSE(f.facts.copies_host_limited);  // a busy core cannot be the limit at the link's rate
  EXPECT_TRUE(has_text(fixes(f, w)[0], "Keep data on the GPU"));
}

TEST(Copies, PageableCopiesBetweenKernelsLeadHostBoundWithPinnedMemory) {
  // GEMMs then a pageable copy each step: the GPU waits on the host thread that
  // stages the copy; when kernels run they fill the SMs.
  const std::vector<ProcessSample> procs{proc(7, "python3", 9000.0, 100.0)};
  const auto w = steady({{Metric::GpuUtil, 40},
                         {Metric::SmActive, 36},
                         {Metric::TensorActive, 20},
                         {Metric::PcieRxMibs, 5 * kMibPerGbs}},
                        procs);
  const auto f = classify(w);
  EXPECT_EQ(f.state, GpuState::HostBound);
  EXPECT_TRUE(f.facts.copies_host_limited);
  EXPECT_TRUE(has_text(fixes(f, w)[0], "pin_memory"));
}

// --- blips -------------------------------------------------------------------

TEST(Blips, AFewBlipsOnAnIdleGpuAreIdle) {
  // 5 of 50 samples with a tiny kernel: window mean utilization 3 %, SMs nearly
  // idle in kernel time, but kernels are in only 10 % of the samples.
  const auto w = steady({{Metric::GpuUtil, 30}, {Metric::SmActive, 0.3}}, std::nullopt, 10);
  EXPECT_NEAR(w.kernel_sample_share, 0.1, 1e-9);
  const auto f = classify(w);
  EXPECT_EQ(f.state, GpuState::Idle);
  bool cited = false;
  for (const auto& e : f.evidence) cited |= e.key == "kernel_sample_share" && e.op == "<";
  EXPECT_TRUE(cited);
  // With a large allocation, the blips are still an idle GPU holding memory.
  const std::vector<ProcessSample> procs{proc(7, "python3", 30000.0)};
  EXPECT_EQ(classify(steady({{Metric::GpuUtil, 30}, {Metric::SmActive, 0.3}}, procs, 10)).state,
            GpuState::IdleHoldingMemory);
}

TEST(Blips, TinyKernelsInEverySampleAreLaunchBound) {
  const auto w = steady({{Metric::GpuUtil, 30}, {Metric::SmActive, 0.3}});
  EXPECT_EQ(classify(w).state, GpuState::LaunchBound);
}

// --- empty GPM intervals -----------------------------------------------------

Sample busy_sample(double t) {
  Sample s;
  s.t = t;
  s.values.set(Metric::GpuUtil, 100);
  s.values.set(Metric::SmActive, 80);
  s.values.set(Metric::TensorActive, 40);
  s.values.set(Metric::DramActive, 30);
  s.values.set(Metric::PcieRxMibs, 20);
  return s;
}

Sample empty_interval(double t) {
  Sample s;
  s.t = t;
  s.values.set(Metric::GpuUtil, 100);
  for (const auto& info : all_metrics()) {
    if (info.source == MetricSource::Gpm && info.id != Metric::DramActive)
      s.values.set(info.id, 0.0);
  }
  return s;
}

TEST(GpmInterval, TheEmptySignatureAndOnlyIt) {
  EXPECT_TRUE(gpm_interval_empty(empty_interval(1)));
  EXPECT_FALSE(gpm_interval_empty(busy_sample(1)));
  Sample idle = empty_interval(1);
  idle.values.set(Metric::DramActive, 0.001);  // a real idle interval has DRAM
  EXPECT_FALSE(gpm_interval_empty(idle));
  Sample classic;
  classic.values.set(Metric::GpuUtil, 0);  // no GPM at all: nothing to drop
  EXPECT_FALSE(gpm_interval_empty(classic));

  Sample dropped = empty_interval(1);
  EXPECT_TRUE(drop_empty_gpm_interval(dropped));
  EXPECT_FALSE(dropped.values.has(Metric::SmActive));
  EXPECT_EQ(dropped.values.get(Metric::GpuUtil), 100);
}

TEST(GpmInterval, TheWindowIgnoresAnEmptyInterval) {
  SampleWindow w(WindowSettings{}, hardware_limits(h100()));
  for (int i = 0; i < 50; ++i) {
    w.push(i == 25 ? empty_interval(0.1 * i) : busy_sample(0.1 * i));
  }
  EXPECT_EQ(w.stats().min.get(Metric::SmActive), 80);
  EXPECT_EQ(w.stats().empty_gpm_intervals, 1u);
  EXPECT_EQ(w.restarts(), 0u);
}

// --- fixes -------------------------------------------------------------------

TEST(Fixes, BusyTensorPipesGetNoPrecisionAdvice) {
  const auto w =
      steady({{Metric::GpuUtil, 100}, {Metric::SmActive, 88}, {Metric::TensorActive, 36}});
  const auto f = classify(w);
  ASSERT_EQ(f.state, GpuState::ComputeBound);
  for (const auto& x : fixes(f, w)) {
    EXPECT_FALSE(has_text(x, "mixed precision")) << x;
    EXPECT_FALSE(has_text(x, "TF32")) << x;
    EXPECT_FALSE(has_text(x, "bf16")) << x;
  }
}

TEST(Fixes, IdleTensorPipesLeadWithTheTensorCoreHint) {
  // The premise: the math runs (FP32 pipe at work) and not on tensor cores.
  const auto w = steady({{Metric::GpuUtil, 100},
                         {Metric::SmActive, 95},
                         {Metric::TensorActive, 0.0},
                         {Metric::Fp32Active, 60}});
  const auto f = classify(w);
  ASSERT_EQ(f.state, GpuState::ComputeBound);
  const auto fx = fixes(f, w);
  EXPECT_TRUE(has_text(fx[0], "TF32")) << fx[0];
  EXPECT_TRUE(has_text(fx[0], "tensor cores")) << fx[0];
}

TEST(Fixes, NoTensorCoreAdviceWithoutAMathPipeAtWork) {
  // SMs resident, every tensor/FP pipe idle, DRAM quiet: the warps wait.
  const auto w = steady({{Metric::GpuUtil, 100},
                         {Metric::SmActive, 95},
                         {Metric::TensorActive, 0.0},
                         {Metric::Fp32Active, 0.5},
                         {Metric::Fp16Active, 0.0},
                         {Metric::DramActive, 2}});
  const auto f = classify(w);
  ASSERT_EQ(f.state, GpuState::ComputeBound);
  const auto fx = fixes(f, w);
  for (const auto& x : fx) {
    EXPECT_FALSE(has_text(x, "TF32")) << x;
    EXPECT_FALSE(has_text(x, "autocast")) << x;
  }
  EXPECT_TRUE(has_text(fx[0], "no math pipe works")) << fx[0];
}

TEST(Fixes, WithoutPipeReadingsTheTensorCoreAdviceSaysItsPremiseWasNotChecked) {
  const auto w = steady({{Metric::GpuUtil, 100}, {Metric::SmActive, 95}});
  const auto f = classify(w);
  ASSERT_EQ(f.state, GpuState::ComputeBound);
  const auto fx = fixes(f, w);
  EXPECT_TRUE(has_text(fx[0], "not measured")) << fx[0];
}

TEST(Classifier, ResidentWarpsWithNoMathAndBusyDramAreAMemoryStall) {
  // A random gather: every SM resident, no pipe works, DRAM at half its peak.
  const auto w = steady({{Metric::GpuUtil, 100},
                         {Metric::SmActive, 99},
                         {Metric::TensorActive, 0.0},
                         {Metric::Fp32Active, 0.2},
                         {Metric::Fp16Active, 0.0},
                         {Metric::DramActive, 45}});
  const auto f = classify(w);
  EXPECT_EQ(f.state, GpuState::MemoryBound);
  EXPECT_TRUE(f.facts.memory_stall);
  const auto fx = fixes(f, w);
  EXPECT_TRUE(has_text(fx[0], "scattered memory access")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(has_text(x, "tensor core")) << x;
  // The same counters with the FP32 pipe at work are compute, not a stall.
  const auto busy = steady({{Metric::GpuUtil, 100},
                            {Metric::SmActive, 99},
                            {Metric::TensorActive, 0.0},
                            {Metric::Fp32Active, 40},
                            {Metric::DramActive, 45}});
  EXPECT_EQ(classify(busy).state, GpuState::ComputeBound);
}

TEST(Fixes, IntegerWorkOnEverySmIsComputeWithoutPrecisionAdvice) {
  // A hash on every SM: the integer pipe works, no float or tensor pipe does.
  const auto w = steady({{Metric::GpuUtil, 100},
                         {Metric::SmActive, 98},
                         {Metric::IntActive, 70},
                         {Metric::TensorActive, 0.0},
                         {Metric::Fp32Active, 0.0},
                         {Metric::Fp16Active, 0.0},
                         {Metric::DramActive, 0.5}});
  const auto f = classify(w);
  ASSERT_EQ(f.state, GpuState::ComputeBound);
  EXPECT_TRUE(f.facts.int_work);
  const auto fx = fixes(f, w);
  EXPECT_TRUE(has_text(fx[0], "integer")) << fx[0];
  for (const auto& x : fx) {
    EXPECT_FALSE(has_text(x, "TF32")) << x;
    EXPECT_FALSE(has_text(x, "autocast")) << x;
  }
}

TEST(Classifier, NoKernelWhileItsProcessIsAtAFullCoreIsAWaitOnThatProcess) {
  // The job's only process tokenizes in Python with 14 GiB held: not unused.
  const std::vector<ProcessSample> busy{proc(7, "python3", 14336.0, 100.0)};
  const auto w = steady({{Metric::GpuUtil, 0}, {Metric::SmActive, 0}}, busy);
  const auto f = classify(w);
  EXPECT_EQ(f.state, GpuState::HostBound);
  EXPECT_TRUE(f.facts.waits_on_process);
  FixContext in_job;
  in_job.in_job = true;
  const auto fx = fixes(f, w, in_job);
  EXPECT_TRUE(has_text(fx[0], "CPU")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(has_text(x, "release")) << x;
  // The same process asleep: idle, holding memory.
  const std::vector<ProcessSample> asleep{proc(7, "python3", 24576.0, 0.5)};
  EXPECT_EQ(classify(steady({{Metric::GpuUtil, 0}, {Metric::SmActive, 0}}, asleep)).state,
            GpuState::IdleHoldingMemory);
}

TEST(Fixes, AProcessAtAFullCoreGetsBothHypothesesAndTheCommandThatSettlesThem) {
  // .item() after every layer and single-threaded preprocessing both read as
  // a GPU idle 40 % of the time beside a process at a full core.
  const std::vector<ProcessSample> procs{proc(7, "python3", 4000.0, 100.0)};
  const auto w = steady({{Metric::GpuUtil, 55}, {Metric::SmActive, 50}}, procs);
  const auto f = classify(w);
  ASSERT_EQ(f.state, GpuState::HostBound);
  const auto fx = fixes(f, w);
  EXPECT_TRUE(has_text(fx[0], ".item()")) << fx[0];
  EXPECT_TRUE(has_text(fx[0], "num_workers=0")) << fx[0];
  EXPECT_TRUE(has_text(fx[0], "gpulens run --kernels")) << fx[0];
  // No copy traffic: no pinned-memory advice.
  for (const auto& x : fx) EXPECT_FALSE(has_text(x, "pin_memory")) << x;
}

TEST(Fixes, AWaitingProcessEarnsTheDataLoaderAdvice) {
  // The main process blocks on its DataLoader queue (5 % of a core).
  const std::vector<ProcessSample> procs{proc(7, "python3", 1800.0, 5.0)};
  const auto w = steady({{Metric::GpuUtil, 3}, {Metric::SmActive, 2.5}}, procs);
  const auto f = classify(w);
  ASSERT_EQ(f.state, GpuState::HostBound);
  const auto fx = fixes(f, w);
  EXPECT_TRUE(has_text(fx[0], "DataLoader")) << fx[0];
  EXPECT_FALSE(has_text(fx[0], ".item()")) << fx[0];
}

TEST(Copies, DeviceToHostCopiesAtALowLinkShareStagedByTheHostAreCopyTime) {
  // 8 MiB .cpu() into pageable memory with host work between: 1.1 GiB/s, 2 %
  // of a Gen5 link, kernels almost never.
  const std::vector<ProcessSample> procs{proc(7, "python3", 2000.0, 100.0)};
  const auto w = steady({{Metric::GpuUtil, 30},
                         {Metric::SmActive, 0.1},
                         {Metric::PcieTxMibs, 1100},
                         {Metric::PcieRxMibs, 5}},
                        procs);
  const auto f = classify(w);
  EXPECT_EQ(f.state, GpuState::PcieBound);
  const auto fx = fixes(f, w);
  EXPECT_TRUE(has_text(fx[0], "pinned")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(has_text(x, "CUDA Graph")) << x;
  // Host-to-device traffic of the same size is what launching kernels costs
  // (the GPU fetches command buffers): still launch-bound.
  const auto launches = steady({{Metric::GpuUtil, 30},
                                {Metric::SmActive, 0.1},
                                {Metric::PcieTxMibs, 50},
                                {Metric::PcieRxMibs, 460}},
                               procs);
  EXPECT_EQ(classify(launches).state, GpuState::LaunchBound);
}

}  // namespace
}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
// Waits on the host that read idle before issue 46: a process at a full core
// while kernels run a sliver of the time (torch.compile's first steps), a
// process whose CPU reads just under a core from the sampler's tick noise, and
// a GPU that steps now and then while DataLoader workers (processes without a
// CUDA context, seen only in the host's total) keep cores busy. And what must
// stay as it was: a loop that synchronises after every op, an idle GPU on a
// busy host, blips.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

#include "diagnosis/classifier.hpp"
#include "diagnosis/fixes.hpp"
#include "diagnosis/window.hpp"
#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::h100;
using testing::proc;
using HostValues = std::initializer_list<std::pair<Metric, double>>;

HardwareLimits host_limits(std::optional<int> cores = 16) {
  HardwareLimits hw = hardware_limits(h100());
  hw.host_cpu_count = cores;
  return hw;
}

// A 5 s window at 10 Hz; `values` hold in every `kernel_every`-th sample, the
// others read no kernel (host CPU and processes in every sample).
WindowStats host_window(HostValues values, double host_cpu_pct, std::vector<ProcessSample> procs,
                        int kernel_every = 1) {
  SampleWindow w(WindowSettings{}, host_limits());
  for (int i = 0; i < 50; ++i) {
    Sample s;
    s.t = 2000 + 0.1 * i;
    s.values.set(Metric::GpuUtil, 0);
    s.values.set(Metric::SmActive, 0.01);
    s.values.set(Metric::TensorActive, 0);
    s.values.set(Metric::DramActive, 0.1);
    s.values.set(Metric::PcieRxMibs, 20);
    s.values.set(Metric::PcieTxMibs, 5);
    if (i % kernel_every == 0) {
      for (const auto& [m, v] : values) s.values.set(m, v);
    }
    s.values.set(Metric::HostCpuPct, host_cpu_pct);
    s.values.set(Metric::MemUsedMib, 9000);
    s.procs = procs;
    w.push(s);
  }
  return w.stats();
}

StateFinding judge(const WindowStats& w, std::optional<int> cores = 16) {
  return classify_state(w, host_limits(cores), Thresholds{}, {}, 5.0);
}

std::string first_fix(const StateFinding& f, const WindowStats& w) {
  const auto fx = fixes_for_state(f, w, host_limits(), FixContext{});
  return fx.empty() ? std::string() : fx.front();
}

TEST(HostWait, ASliverOfKernelTimeWithAProcessAtAFullCoreIsHostWork) {
  // torch.compile's first steps: Dynamo and Inductor keep the main process at
  // a full core; now and then a warm-up kernel runs (kernel time ~2 %).
  const auto w = host_window({{Metric::GpuUtil, 2}, {Metric::SmActive, 1.5}}, 8.0,
                             {proc(11, "python3", 9000.0, 100.0)});
  const auto f = judge(w);
  EXPECT_EQ(f.state, GpuState::HostBound);
  EXPECT_TRUE(f.facts.waits_on_process);
  const auto fix = first_fix(f, w);
  EXPECT_NE(fix.find("compiling"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("DataLoader"), std::string::npos) << fix;
}

TEST(HostWait, ACoreThatReadsJustUnderNinetyFromTickNoiseIsAFullCore) {
  // Per-process CPU is counted in 10-ms ticks: a process that never leaves the
  // CPU reads 89.95, 100 or 110 % by turns (the H200 corpus' compile phase).
  const auto w = host_window({{Metric::GpuUtil, 0}}, 6.0, {proc(12, "python3", 9000.0, 89.95)});
  const auto f = judge(w);
  EXPECT_EQ(f.state, GpuState::HostBound);
  EXPECT_TRUE(f.facts.waits_on_process);
}

TEST(HostWait, ALoopThatSynchronisesAfterEveryOpKeepsItsOwnReading) {
  // .item() after every small op: each kernel waits for the host's round trip,
  // so kernel time stays far above 5 % (28 % on the H200 recording).
  const auto w = host_window({{Metric::GpuUtil, 28}, {Metric::SmActive, 6}}, 7.0,
                             {proc(13, "python3", 3000.0, 100.0)});
  const auto f = judge(w);
  EXPECT_FALSE(f.facts.waits_on_process);
  EXPECT_TRUE(f.state == GpuState::LaunchBound || f.state == GpuState::HostBound)
      << state_id(f.state);
}

TEST(HostWait, AKernelViewWithoutSynchronisationsDoesNotPointAtItself) {
  // The same loop under `gpulens run --kernels` in a job that carries PyTorch's
  // profiler: the view recorded kernels but no synchronisations, so it can tell
  // neither cause, and the fix must not send the user to it to find out.
  const auto w = host_window({{Metric::GpuUtil, 28}, {Metric::SmActive, 6}}, 7.0,
                             {proc(13, "python3", 3000.0, 100.0)});
  const auto f = judge(w);
  ASSERT_TRUE(f.facts.process_at_full_core);
  FixContext traced;
  traced.kernels = KernelEvidence{};
  traced.kernels->syncs_recorded = false;
  const auto fx = fixes_for_state(f, w, host_limits(), traced);
  ASSERT_FALSE(fx.empty());
  EXPECT_NE(fx.front().find("recorded no CUDA synchronisations"), std::string::npos) << fx.front();
  EXPECT_EQ(fx.front().find("`gpulens run --kernels` counts"), std::string::npos) << fx.front();
  // Without a kernel view the fix still says where to look.
  const std::string bare = first_fix(f, w);
  EXPECT_NE(bare.find("`gpulens run --kernels` counts the synchronisations"), std::string::npos)
      << bare;
}

TEST(HostWait, AStepNowAndThenWhileWorkersKeepCoresBusyIsAnInputWait) {
  // A small CNN fed by four DataLoader workers at full cores: a 2-ms step every
  // ~100 ms, so kernels show in one sample of four and kernel time is under
  // 1 %; the main process waits at 5 % of a core; the host reads 26 % of 16
  // cores, about four of them in the workers.
  const auto w = host_window({{Metric::GpuUtil, 3}, {Metric::SmActive, 2}}, 26.0,
                             {proc(14, "python3", 4000.0, 5.0)}, 4);
  const auto f = judge(w);
  EXPECT_EQ(f.state, GpuState::HostBound);
  EXPECT_TRUE(f.facts.waits_on_other_processes);
  ASSERT_TRUE(f.facts.other_cpu_cores);
  EXPECT_NEAR(*f.facts.other_cpu_cores, 0.26 * 16 - 0.05, 0.01);
  const auto fix = first_fix(f, w);
  EXPECT_NE(fix.find("DataLoader"), std::string::npos) << fix;
}

TEST(HostWait, AnIdleGpuOnABusyHostIsNotWaitingOnIt) {
  // A notebook left open on a node whose CPUs run other work: no step at all.
  const auto w = host_window({}, 60.0, {proc(15, "python3", 40000.0, 0.5)});
  const auto f = judge(w);
  EXPECT_FALSE(f.facts.waits_on_other_processes);
  EXPECT_NE(f.state, GpuState::HostBound);
}

TEST(HostWait, ABlipEveryFewSecondsOnABusyHostStaysIdle) {
  // One tiny kernel in 50 samples (a health check) is not a job stepping.
  const auto w = host_window({{Metric::GpuUtil, 5}, {Metric::SmActive, 0.5}}, 60.0,
                             {proc(16, "python3", 40000.0, 0.5)}, 50);
  const auto f = judge(w);
  EXPECT_FALSE(f.facts.waits_on_other_processes);
  EXPECT_NE(f.state, GpuState::HostBound);
}

TEST(HostWait, WithoutTheHostsCoreCountTheOtherCoresAreNotGuessed) {
  const auto w = host_window({{Metric::GpuUtil, 3}, {Metric::SmActive, 2}}, 26.0,
                             {proc(17, "python3", 4000.0, 5.0)}, 4);
  const auto f = judge(w, std::nullopt);
  EXPECT_FALSE(f.facts.other_cpu_cores);
  EXPECT_FALSE(f.facts.waits_on_other_processes);
}

TEST(HostWait, TheJobsOtherRanksAreNotWhatTheGpuWaitsOn) {
  // Rank 0 initialises at start-up while rank 1's process keeps a core busy on
  // another GPU of the 32-core host: the host's 2 busy cores are the ranks.
  SampleWindow sw(WindowSettings{}, host_limits(32));
  for (int i = 0; i < 50; ++i) {
    Sample s;
    s.t = 3000 + 0.1 * i;
    s.values.set(Metric::GpuUtil, i % 10 == 0 ? 7.0 : 0.0);
    s.values.set(Metric::HostCpuPct, 6.25);
    s.procs = std::vector<ProcessSample>{proc(19, "python3", 3000.0, 0.0)};
    sw.push(s);
  }
  WindowStats w = sw.stats();
  w.procs.host_gpus_cpu_pct = 100.0;  // the other rank's process, as the engine counts it
  const auto f = classify_state(w, host_limits(32), Thresholds{}, {}, 5.0);
  EXPECT_FALSE(f.facts.waits_on_other_processes);
  ASSERT_TRUE(f.facts.other_cpu_cores);
  EXPECT_NEAR(*f.facts.other_cpu_cores, 1.0, 0.01);
}

TEST(HostWait, AFewBusyCoresBesideTheJobAreNotEnough) {
  // The sampler, a shell and the kernel's threads: about one core.
  const auto w = host_window({{Metric::GpuUtil, 3}, {Metric::SmActive, 2}}, 6.0,
                             {proc(18, "python3", 4000.0, 5.0)}, 4);
  const auto f = judge(w);
  EXPECT_FALSE(f.facts.waits_on_other_processes);
}

}  // namespace
}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
// The workload classes of issue 11 on synthetic windows built from the physics
// of each case: hung kernels on any number of SMs (and the steady small kernels
// that must not read as hangs), copies with idle SMs, blips on an idle GPU,
// empty GPM intervals, and the fixes that must lead (a hang's, pinned memory,
// no mixed precision for busy tensor pipes, the job's own memory in `run`).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <utility>

#include "core/gpm_interval.hpp"
#include "diagnosis/engine.hpp"
#include "diagnosis/fixes.hpp"
#include "diagnosis/timeline.hpp"
#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::proc;
using Values = std::initializer_list<std::pair<Metric, double>>;

DeviceInfo h100() {
  DeviceInfo d;
  d.index = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.mem_total_mib = 81559;
  d.power_limit_w = 700;
  d.max_sm_clock_mhz = 1980;
  d.pcie_gen = 5;
  d.pcie_width = 16;
  return d;
}

TraceHeader header() {
  TraceHeader h;
  h.interval_s = 0.1;
  h.devices.push_back(h100());
  return h;
}

constexpr double kMibPerGbs = 1e9 / 1048576.0;

// Every GPM pipe and DRAM at rest, as a spinning kernel leaves them.
void quiet_pipes(Sample& s) {
  for (Metric m :
       {Metric::TensorActive, Metric::Fp16Active, Metric::Fp32Active, Metric::Fp64Active}) {
    s.values.set(m, 0.0);
  }
  s.values.set(Metric::DramActive, 0.001);
}

// A kernel spinning on `sms` of 132 SMs, waiting for a flag that never comes:
// SM activity is the resident share, nothing else moves (H100 figures).
std::function<void(Sample&, double)> hang_on(double sms) {
  return [sms](Sample& s, double) {
    s.values.set(Metric::GpuUtil, 100);
    s.values.set(Metric::SmActive, sms / 132 * 100);
    quiet_pipes(s);
    s.values.set(Metric::PowerW, 116 + sms * 0.15);
    s.values.set(Metric::MemUsedMib, 1200);
    s.values.set(Metric::PcieRxMibs, 2);
    s.values.set(Metric::PcieTxMibs, 3);
    s.values.set(Metric::NvlinkRxMibs, 0);
  };
}

using Fill = std::function<void(Sample&, double)>;

struct Fed {
  std::vector<AlertEvent> events;
};

// One sample every 100 ms from t0 for `seconds`.
Fed feed(DiagnosisEngine& engine, double t0, double seconds, const Fill& fill) {
  Fed out;
  for (int i = 0; i < static_cast<int>(seconds * 10); ++i) {
    const double t = t0 + 0.1 * i;
    Tick tick;
    tick.t = t;
    Sample s;
    s.t = t;
    s.gpu = 0;
    fill(s, t);
    tick.samples.push_back(std::move(s));
    engine.on_tick(tick);
    for (auto& e : engine.take_events()) out.events.push_back(std::move(e));
  }
  return out;
}

int count(const std::vector<AlertEvent>& events, const std::string& rule) {
  int n = 0;
  for (const auto& e : events) n += e.rule == rule && e.kind == AlertEvent::Kind::Firing;
  return n;
}

bool contains(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

// --- hangs -------------------------------------------------------------------

TEST(Hang, StalledFiresOnAHungKernelWhateverItsSmShare) {
  // 1, 8, 16, 32, 64 and all 132 SMs: NCCL runs one block per channel, so a
  // rank of a hung collective may hold any number of them.
  for (double sms : {1.0, 8.0, 16.0, 32.0, 64.0, 132.0}) {
    DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
    EXPECT_EQ(count(feed(engine, 0, 60, hang_on(sms)).events, "stalled"), 0) << sms;
    EXPECT_EQ(count(feed(engine, 60, 10, hang_on(sms)).events, "stalled"), 1) << sms;
    const auto fixes = engine.fixes(0);
    ASSERT_FALSE(fixes.empty());
    EXPECT_TRUE(contains(fixes[0], "py-spy dump")) << sms << ": " << fixes[0];
  }
}

TEST(Hang, AHungKernelOnEverySmKeepsItsStateAndTheHangLeads) {
  DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
  feed(engine, 0, 80, hang_on(132));
  // The state vocabulary calls a fully resident GPU compute_bound; the alert
  // and its fix say what it is.
  EXPECT_EQ(engine.status(0).state.state, GpuState::ComputeBound);
  const auto fixes = engine.fixes(0);
  ASSERT_GE(fixes.size(), 3u);
  EXPECT_TRUE(contains(fixes[0], "py-spy"));
  EXPECT_TRUE(contains(fixes[1], "NCCL_DEBUG=INFO"));
  EXPECT_TRUE(contains(fixes[1], "init_process_group(timeout=...)"));
  EXPECT_TRUE(contains(fixes[2], "cuda-gdb -p"));
  // No tuning advice on a hang: the state's own fixes are left out.
  for (std::size_t i = 3; i < fixes.size(); ++i) {
    EXPECT_FALSE(contains(fixes[i], "SMs")) << fixes[i];
    EXPECT_FALSE(contains(fixes[i], "blocks")) << fixes[i];
  }
}

TEST(Hang, SteadySmallKernelsDoingWorkAreNotHangs) {
  // 8 blocks streaming a buffer: DRAM moves; 8 blocks of FP32 FMA chains: the
  // FP32 pipe works. Both are flat and low-power, like a hang, but not hung.
  const Fill stream8 = [](Sample& s, double t) {
    hang_on(8)(s, t);
    s.values.set(Metric::DramActive, 2.6);
  };
  const Fill fma8 = [](Sample& s, double t) {
    hang_on(8)(s, t);
    s.values.set(Metric::Fp32Active, 5.5);
  };
  for (const auto& fill : {stream8, fma8}) {
    DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
    EXPECT_EQ(count(feed(engine, 0, 200, fill).events, "stalled"), 0);
    EXPECT_EQ(engine.status(0).state.state, GpuState::SmUnderused);
  }
}

TEST(Hang, OneBurstOfMathInTheWindowIsNotAHang) {
  // The window maximum, not the mean: a kernel that does real work once per
  // second is progressing even if its mean pipe activity rounds to nothing.
  DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
  const auto fed = feed(engine, 0, 200, [](Sample& s, double t) {
    hang_on(16)(s, t);
    if (static_cast<int>(t * 10) % 10 == 0) s.values.set(Metric::Fp32Active, 0.5);
  });
  EXPECT_EQ(count(fed.events, "stalled"), 0);
}

TEST(Hang, MovingCountersHighPowerOrTrafficAreNotHangs) {
  const std::vector<Fill> busy{
      [](Sample& s, double t) {  // power high for the activity
        hang_on(32)(s, t);
        s.values.set(Metric::PowerW, 400);
      },
      [](Sample& s, double t) {  // SM activity moving
        hang_on(32)(s, t);
        s.values.set(Metric::SmActive, 20 + 5 * (static_cast<int>(t * 10) % 3));
      },
      [](Sample& s, double t) {  // memory moving
        hang_on(32)(s, t);
        s.values.set(Metric::MemUsedMib, 1200 + 100 * (static_cast<int>(t) % 5));
      },
      [](Sample& s, double t) {  // copies arriving
        hang_on(32)(s, t);
        s.values.set(Metric::PcieRxMibs, 2000);
      },
  };
  for (std::size_t i = 0; i < busy.size(); ++i) {
    DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
    EXPECT_EQ(count(feed(engine, 0, 200, busy[i]).events, "stalled"), 0) << i;
  }
}

TEST(Hang, WithoutPipeOrDramFiguresTheRuleDoesNotJudge) {
  DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
  const auto fed = feed(engine, 0, 200, [](Sample& s, double t) {
    hang_on(16)(s, t);
    for (Metric m : {Metric::TensorActive, Metric::Fp16Active, Metric::Fp32Active,
                     Metric::Fp64Active, Metric::DramActive}) {
      s.values.clear(m);
    }
  });
  EXPECT_EQ(count(fed.events, "stalled"), 0);
}

// Three GPUs of one job (no process says otherwise, so every watched GPU is one
// job): the ranks on `hung` spin in a collective the others never joined.
std::vector<AlertEvent> feed_job(DiagnosisEngine& engine, const std::vector<int>& hung,
                                 double seconds) {
  std::vector<AlertEvent> events;
  for (int i = 0; i < static_cast<int>(seconds * 10); ++i) {
    Tick tick;
    tick.t = 0.1 * i;
    for (int gpu = 0; gpu < 3; ++gpu) {
      Sample s;
      s.t = tick.t;
      s.gpu = gpu;
      if (std::find(hung.begin(), hung.end(), gpu) != hung.end()) {
        hang_on(16)(s, s.t);
      } else {  // the late rank: on the host, no kernel, its buffers allocated
        s.values.set(Metric::GpuUtil, 0);
        s.values.set(Metric::SmActive, 0);
        quiet_pipes(s);
        s.values.set(Metric::PowerW, 72);
        s.values.set(Metric::MemUsedMib, 1200);
      }
      tick.samples.push_back(std::move(s));
    }
    engine.on_tick(tick);
    for (auto& e : engine.take_events()) events.push_back(std::move(e));
  }
  return events;
}

TraceHeader three_gpus() {
  TraceHeader h = header();
  for (int gpu = 1; gpu < 3; ++gpu) {
    h.devices.push_back(h100());
    h.devices.back().index = gpu;
  }
  return h;
}

TEST(Hang, TheStalledAlertNamesTheRankThatDidNotArrive) {
  DiagnosisEngine engine(three_gpus(), DiagnosisConfig::defaults());
  const auto events = feed_job(engine, {0, 1}, 75);
  int fired = 0;
  for (const auto& e : events) {
    if (e.rule != "stalled" || e.kind != AlertEvent::Kind::Firing) continue;
    ++fired;
    EXPECT_NE(e.gpu, 2) << "the late rank runs nothing: it is not hung";
    EXPECT_TRUE(contains(e.message, "GPU 2 of the same job runs no kernel")) << e.message;
    ASSERT_FALSE(e.fixes.empty());
    EXPECT_TRUE(contains(e.fixes[0], "Start with GPU 2")) << e.fixes[0];
  }
  EXPECT_EQ(fired, 2);
}

TEST(Hang, EveryRankHungNamesNoPeer) {
  DiagnosisEngine engine(three_gpus(), DiagnosisConfig::defaults());
  const auto events = feed_job(engine, {0, 1, 2}, 75);
  int fired = 0;
  for (const auto& e : events) {
    if (e.rule != "stalled" || e.kind != AlertEvent::Kind::Firing) continue;
    ++fired;
    EXPECT_FALSE(contains(e.message, "no kernel meanwhile")) << e.message;
    ASSERT_FALSE(e.fixes.empty());
    EXPECT_TRUE(contains(e.fixes[0], "py-spy dump")) << e.fixes[0];
  }
  EXPECT_EQ(fired, 3);
}

TEST(Hang, APhaseWithAHangLeadsWithTheHangsFix) {
  Trace trace;
  trace.header = header();
  trace.marks.push_back({10.0, "hang:start", nlohmann::json::object()});
  trace.marks.push_back({140.0, "hang:end", nlohmann::json::object()});
  for (int i = 0; i < 1500; ++i) {
    Sample s;
    s.t = 0.1 * i;
    s.gpu = 0;
    if (s.t >= 10.0 && s.t <= 140.0) {
      hang_on(16)(s, s.t);
    } else {
      s.values.set(Metric::GpuUtil, 0);
      s.values.set(Metric::SmActive, 0);
    }
    trace.samples.push_back(std::move(s));
  }
  const auto report = diagnose_trace(trace, DiagnosisConfig::defaults());
  const PhaseSummary* hang = nullptr;
  for (const auto& p : report.phases) {
    if (p.name == "hang") hang = &p;
  }
  ASSERT_NE(hang, nullptr);
  EXPECT_EQ(hang->state, GpuState::SmUnderused);
  ASSERT_FALSE(hang->fixes.empty());
  EXPECT_TRUE(contains(hang->fixes[0], "py-spy")) << hang->fixes[0];
  bool run_led = false;
  for (const auto& r : report.timeline) {
    if (r.state == GpuState::SmUnderused && !r.fixes.empty()) {
      run_led = contains(r.fixes[0], "py-spy");
    }
  }
  EXPECT_TRUE(run_led);
  bool fired = false;
  for (const auto& a : report.alerts) fired |= a.rule == "stalled";
  EXPECT_TRUE(fired);
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
  EXPECT_TRUE(contains(fx[0], "pinned")) << fx[0];
  EXPECT_TRUE(contains(fx[0], "non_blocking=True")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(contains(x, "CUDA Graphs")) << x;
}

TEST(Copies, AnyLinkShareWithIdleSmsIsCopyTime) {
  // 64 KiB copies: 2.5 % of the link. Without CPU figures the copies are not
  // called host-limited, and the fix does not claim so.
  const auto w =
      steady({{Metric::GpuUtil, 8}, {Metric::SmActive, 0.0}, {Metric::PcieRxMibs, 1600}});
  const auto f = classify(w);
  EXPECT_EQ(f.state, GpuState::PcieBound);
  EXPECT_FALSE(f.facts.copies_host_limited);
  EXPECT_TRUE(contains(fixes(f, w)[0], "Keep data on the GPU"));
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
  EXPECT_TRUE(contains(fixes(f, w)[0], "Keep data on the GPU"));
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
  EXPECT_TRUE(contains(fixes(f, w)[0], "pin_memory"));
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
    EXPECT_FALSE(contains(x, "mixed precision")) << x;
    EXPECT_FALSE(contains(x, "TF32")) << x;
    EXPECT_FALSE(contains(x, "bf16")) << x;
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
  EXPECT_TRUE(contains(fx[0], "TF32")) << fx[0];
  EXPECT_TRUE(contains(fx[0], "tensor cores")) << fx[0];
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
    EXPECT_FALSE(contains(x, "TF32")) << x;
    EXPECT_FALSE(contains(x, "autocast")) << x;
  }
  EXPECT_TRUE(contains(fx[0], "no math pipe works")) << fx[0];
}

TEST(Fixes, WithoutPipeReadingsTheTensorCoreAdviceSaysItsPremiseWasNotChecked) {
  const auto w = steady({{Metric::GpuUtil, 100}, {Metric::SmActive, 95}});
  const auto f = classify(w);
  ASSERT_EQ(f.state, GpuState::ComputeBound);
  const auto fx = fixes(f, w);
  EXPECT_TRUE(contains(fx[0], "not measured")) << fx[0];
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
  EXPECT_TRUE(contains(fx[0], "scattered memory access")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(contains(x, "tensor core")) << x;
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
  EXPECT_TRUE(contains(fx[0], "integer")) << fx[0];
  for (const auto& x : fx) {
    EXPECT_FALSE(contains(x, "TF32")) << x;
    EXPECT_FALSE(contains(x, "autocast")) << x;
  }
}

TEST(Hang, IntegerWorkOnAFewSmsIsNotAHang) {
  // 16 SMs hashing for minutes: SM activity and every counter flat, no float
  // pipe, no DRAM, low power: all a hang looks like, but the integer pipe works.
  const auto with_int = [](double pct) {
    return [pct](Sample& s, double t) {
      hang_on(16)(s, t);
      s.values.set(Metric::IntActive, pct);
    };
  };
  DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
  EXPECT_EQ(count(feed(engine, 0, 120, with_int(10.0)).events, "stalled"), 0);
  // The same counters with the integer pipe at a spin's few percent: a hang.
  DiagnosisEngine spin(header(), DiagnosisConfig::defaults());
  EXPECT_EQ(count(feed(spin, 0, 120, with_int(0.4)).events, "stalled"), 1);
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
  EXPECT_TRUE(contains(fx[0], "CPU")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(contains(x, "release")) << x;
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
  EXPECT_TRUE(contains(fx[0], ".item()")) << fx[0];
  EXPECT_TRUE(contains(fx[0], "num_workers=0")) << fx[0];
  EXPECT_TRUE(contains(fx[0], "gpulens run --kernels")) << fx[0];
  // No copy traffic: no pinned-memory advice.
  for (const auto& x : fx) EXPECT_FALSE(contains(x, "pin_memory")) << x;
}

TEST(Fixes, AWaitingProcessEarnsTheDataLoaderAdvice) {
  // The main process blocks on its DataLoader queue (5 % of a core).
  const std::vector<ProcessSample> procs{proc(7, "python3", 1800.0, 5.0)};
  const auto w = steady({{Metric::GpuUtil, 3}, {Metric::SmActive, 2.5}}, procs);
  const auto f = classify(w);
  ASSERT_EQ(f.state, GpuState::HostBound);
  const auto fx = fixes(f, w);
  EXPECT_TRUE(contains(fx[0], "DataLoader")) << fx[0];
  EXPECT_FALSE(contains(fx[0], ".item()")) << fx[0];
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
  EXPECT_TRUE(contains(fx[0], "pinned")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(contains(x, "CUDA Graph")) << x;
  // Host-to-device traffic of the same size is what launching kernels costs
  // (the GPU fetches command buffers): still launch-bound.
  const auto launches = steady({{Metric::GpuUtil, 30},
                                {Metric::SmActive, 0.1},
                                {Metric::PcieTxMibs, 50},
                                {Metric::PcieRxMibs, 460}},
                               procs);
  EXPECT_EQ(classify(launches).state, GpuState::LaunchBound);
}

TEST(Fixes, InsideRunIdleMemoryIsTheJobsOwn) {
  const Fill hold = [](Sample& s, double) {
    s.values.set(Metric::GpuUtil, 0);
    s.values.set(Metric::SmActive, 0.0);
    s.values.set(Metric::MemUsedMib, 24576);
    s.procs = std::vector<ProcessSample>{proc(7, "python3", 24576.0, 1.0)};
  };
  DiagnosisEngine alone(header(), DiagnosisConfig::defaults());
  feed(alone, 0, 10, hold);
  ASSERT_EQ(alone.status(0).state.state, GpuState::IdleHoldingMemory);
  EXPECT_TRUE(contains(alone.fixes(0)[0], "end it or free the GPU"));

  DiagnosisEngine job(header(), DiagnosisConfig::defaults());
  Tick start;
  start.t = 0;
  start.marks.push_back({0.0, "job_start", {{"command", "python3 hold.py"}, {"pid", 7}}});
  job.on_tick(start);
  feed(job, 0.1, 10, hold);
  const auto fx = job.fixes(0);
  EXPECT_TRUE(contains(fx[0], "Your job holds 24.0 GiB")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(contains(x, "end it or free the GPU")) << x;
}

}  // namespace
}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
// Each state on synthetic windows built from the physics of the case, plus the
// throttle flag and the fallbacks when metrics are missing.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

#include "diagnosis/classifier.hpp"
#include "diagnosis/engine.hpp"
#include "diagnosis/fixes.hpp"
#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::h100;
using testing::proc;

using Values = std::initializer_list<std::pair<Metric, double>>;

// A 5 s window of identical samples at 10 Hz.
WindowStats steady(const DeviceInfo& device, Values values,
                   std::optional<std::vector<ProcessSample>> procs = std::nullopt) {
  SampleWindow w(WindowSettings{}, hardware_limits(device));
  for (int i = 0; i < 50; ++i) {
    Sample s;
    s.t = 1000 + 0.1 * i;
    s.gpu = device.index;
    for (const auto& [m, v] : values) s.values.set(m, v);
    s.procs = procs;
    w.push(s);
  }
  return w.stats();
}

StateFinding classify(Values values, std::vector<PeerActivity> peers = {},
                      const DeviceInfo& device = h100(),
                      std::optional<std::vector<ProcessSample>> procs = std::nullopt) {
  return classify_state(steady(device, values, std::move(procs)), hardware_limits(device),
                        Thresholds{}, peers, 5.0);
}

bool has_evidence(const StateFinding& f, const std::string& key) {
  for (const auto& e : f.evidence) {
    if (e.key == key) return true;
  }
  return false;
}

std::string all_notes(const StateFinding& f) {
  std::string out;
  for (const auto& c : f.cannot_tell) out += c + "\n";
  return out;
}

TEST(States, Idle) {
  const auto f = classify({{Metric::GpuUtil, 0}, {Metric::SmActive, 0}});
  EXPECT_EQ(f.state, GpuState::Idle);
  EXPECT_GE(f.confidence, 0.75);
}

TEST(States, IdleHoldingMemoryNeedsALargeShare) {
  std::vector<ProcessSample> procs{proc(42, "python", 40960.0)};
  const auto held = classify({{Metric::GpuUtil, 0}, {Metric::SmActive, 0}}, {}, h100(), procs);
  EXPECT_EQ(held.state, GpuState::IdleHoldingMemory);
  EXPECT_TRUE(has_evidence(held, "memory_held_share"));
  // A leftover CUDA context of a few GiB is not "holding" an 80 GB GPU.
  procs[0].used_mib = 3308;
  EXPECT_EQ(classify({{Metric::GpuUtil, 0}, {Metric::SmActive, 0}}, {}, h100(), procs).state,
            GpuState::Idle);
}

TEST(States, IdleHoldingMemoryFromDeviceMemoryWhenProcessesUnknown) {
  const auto f =
      classify({{Metric::GpuUtil, 0}, {Metric::SmActive, 0}, {Metric::MemUsedMib, 41000}});
  EXPECT_EQ(f.state, GpuState::IdleHoldingMemory);
  EXPECT_NE(all_notes(f).find("processes not sampled"), std::string::npos);
}

TEST(States, MemoryHeldByAnInvisibleProcessStillCounts) {
  // Processes sampled but none listed (another container's): device memory in use.
  const auto f =
      classify({{Metric::GpuUtil, 0}, {Metric::SmActive, 0}, {Metric::MemUsedMib, 41000}}, {},
               h100(), std::vector<ProcessSample>{});
  EXPECT_EQ(f.state, GpuState::IdleHoldingMemory);
}

TEST(States, ComputeBound) {
  const auto f = classify({{Metric::GpuUtil, 99},
                           {Metric::SmActive, 95},
                           {Metric::TensorActive, 92},
                           {Metric::DramActive, 25}});
  EXPECT_EQ(f.state, GpuState::ComputeBound);
  EXPECT_TRUE(has_evidence(f, "sm_active/gpu_util"));
}

TEST(States, MemoryBound) {
  const auto f = classify({{Metric::GpuUtil, 99},
                           {Metric::SmActive, 97.8},
                           {Metric::TensorActive, 0},
                           {Metric::DramActive, 88.6}});
  EXPECT_EQ(f.state, GpuState::MemoryBound);
  EXPECT_TRUE(has_evidence(f, "dram_practical_share"));
}

TEST(States, HeavyDramUnderBusierTensorPipesIsCompute) {
  const auto f = classify({{Metric::GpuUtil, 99},
                           {Metric::SmActive, 95},
                           {Metric::TensorActive, 92},
                           {Metric::DramActive, 80}});
  EXPECT_EQ(f.state, GpuState::ComputeBound);
}

TEST(States, PcieBoundFromTheLinksBandwidth) {
  // Gen5 x16 carries 63 GB/s (60,088 MiB/s) per direction; 54,800 is 91 % of it.
  const auto f = classify({{Metric::GpuUtil, 99.6},
                           {Metric::SmActive, 0},
                           {Metric::PcieRxMibs, 54800},
                           {Metric::PcieTxMibs, 3300}});
  EXPECT_EQ(f.state, GpuState::PcieBound);
  EXPECT_TRUE(has_evidence(f, "pcie_rx_mibs"));
  EXPECT_GE(f.confidence, 0.75);
  // The same traffic on a Gen4 x16 link would be beyond its capacity: still PCIe.
  DeviceInfo gen3 = h100();
  gen3.pcie_gen = 3;
  EXPECT_EQ(classify({{Metric::GpuUtil, 99}, {Metric::SmActive, 0}, {Metric::PcieRxMibs, 12000}},
                     {}, gen3)
                .state,
            GpuState::PcieBound);
}

TEST(States, PageableCopiesDominateWithLowerConfidence) {
  const auto f =
      classify({{Metric::GpuUtil, 100}, {Metric::SmActive, 0}, {Metric::PcieRxMibs, 20000}});
  EXPECT_EQ(f.state, GpuState::PcieBound);
  // Copy time for sure (SMs idle), but below the link's rate the limit may lie
  // on the host side: never high-certainty beyond 0.8.
  EXPECT_LE(f.confidence, 0.8);
}

TEST(States, InterconnectBound) {
  DeviceInfo h200 = h100();
  h200.name = "NVIDIA H200";
  const auto f = classify({{Metric::GpuUtil, 97},
                           {Metric::SmActive, 17},
                           {Metric::NvlinkTxMibs, 310000},
                           {Metric::NvlinkRxMibs, 310000}},
                          {}, h200);
  EXPECT_EQ(f.state, GpuState::InterconnectBound);
  EXPECT_TRUE(has_evidence(f, "nvlink_link_share"));
}

TEST(States, InterconnectWithUnknownLinkCountComparesWithPcie) {
  DeviceInfo unknown = h100();
  unknown.name = "Some future GPU";
  const auto f = classify(
      {{Metric::GpuUtil, 97}, {Metric::SmActive, 17}, {Metric::NvlinkTxMibs, 200000}}, {}, unknown);
  EXPECT_EQ(f.state, GpuState::InterconnectBound);
  EXPECT_LE(f.confidence, 0.5);
}

TEST(States, HostBoundWhenKernelsAreLargeButRare) {
  const auto f = classify({{Metric::GpuUtil, 12}, {Metric::SmActive, 9.6}});
  EXPECT_EQ(f.state, GpuState::HostBound);
  EXPECT_NE(all_notes(f).find("per-process CPU"), std::string::npos);
}

TEST(States, HostBoundWithAProcessAtOneFullCoreSuggestsDataLoaderWorkers) {
  std::vector<ProcessSample> procs{proc(7, "python", 5000.0, 99.0)};
  const auto f = classify({{Metric::GpuUtil, 13}, {Metric::SmActive, 10.6}}, {}, h100(), procs);
  ASSERT_EQ(f.state, GpuState::HostBound);
  EXPECT_TRUE(has_evidence(f, "process_cpu_pct"));
  const auto w = steady(h100(), {{Metric::GpuUtil, 13}, {Metric::SmActive, 10.6}}, procs);
  const auto fixes = fixes_for_state(f, w, hardware_limits(h100()), {});
  ASSERT_FALSE(fixes.empty());
  EXPECT_NE(fixes[0].find("num_workers"), std::string::npos) << fixes[0];
  EXPECT_NE(fixes[0].find("python (pid 7)"), std::string::npos) << fixes[0];
}

TEST(States, AStarvedJobRunningAFewPercentOfTheTimeIsNotIdle) {
  // 16 large GEMMs (~4 ms) every 124 ms: 3 % kernel time, SMs well used then.
  const auto f = classify({{Metric::GpuUtil, 3}, {Metric::SmActive, 2.9}});
  EXPECT_EQ(f.state, GpuState::HostBound);
  EXPECT_GE(f.confidence, 0.75);
}

TEST(States, LaunchBound) {
  const auto f =
      classify({{Metric::GpuUtil, 30}, {Metric::SmActive, 0.03}, {Metric::PcieRxMibs, 200}});
  EXPECT_EQ(f.state, GpuState::LaunchBound);
}

TEST(States, SmUnderusedSaysHowManySmsAreBusy) {
  const auto f = classify({{Metric::GpuUtil, 100}, {Metric::SmActive, 0.76}});
  EXPECT_EQ(f.state, GpuState::SmUnderused);
  EXPECT_NE(describe_state(f, hardware_limits(h100())).find("about 1 of 132 SMs"),
            std::string::npos);
  EXPECT_EQ(classify({{Metric::GpuUtil, 100}, {Metric::SmActive, 49.9}}).state,
            GpuState::SmUnderused);
  EXPECT_EQ(classify({{Metric::GpuUtil, 100}, {Metric::SmActive, 99.7}}).state,
            GpuState::ComputeBound);
}

TEST(States, WaitingOnPeerNeedsABusyPeer) {
  const Values rank1{{Metric::GpuUtil, 99}, {Metric::SmActive, 0.75}};
  EXPECT_EQ(classify(rank1, {{0, 95.2, 99.0, std::nullopt}}).state, GpuState::WaitingOnPeer);
  EXPECT_EQ(classify(rank1, {{0, 20.0, 99.0, std::nullopt}}).state, GpuState::SmUnderused);
  EXPECT_EQ(classify(rank1).state, GpuState::SmUnderused);
}

TEST(States, ASlowerRankDoingTheSameWorkIsWaitedFor) {
  // DDP, rank 0 held up 40 ms a step on its host: every rank does the same GEMMs
  // (14 % SM activity); the others sit in NCCL the rest of the time (98 %
  // utilization), rank 0's GPU has a kernel only 18 % of the time.
  const Values rank1{{Metric::GpuUtil, 98}, {Metric::SmActive, 14.5}};
  const auto f = classify(rank1, {{0, 13.9, 18.0, std::nullopt}});
  EXPECT_EQ(f.state, GpuState::WaitingOnPeer);
  EXPECT_TRUE(f.facts.peer_slow_rank);
  EXPECT_EQ(f.facts.peer_gpu, 0);
  const auto fx = fixes_for_state(f, WindowStats{}, hardware_limits(h100()), FixContext{});
  ASSERT_FALSE(fx.empty());
  EXPECT_NE(fx[0].find("GPU 0"), std::string::npos) << fx[0];
  EXPECT_EQ(fx[0].find("blocks"), std::string::npos) << fx[0];
  // A peer that runs nothing is not a rank at work (an unused GPU, or a hang).
  EXPECT_EQ(classify(rank1, {{0, 0.0, 0.0, std::nullopt}}).state, GpuState::SmUnderused);
  // A peer doing other work (far more SM activity per kernel time) is not this rule's.
  EXPECT_EQ(classify(rank1, {{0, 30.0, 40.0, std::nullopt}}).state, GpuState::SmUnderused);
}

TEST(States, TheSameWorkIsJudgedByTheMathPipesWhereTheyWork) {
  // The 2-H200 holdout's waiting rank: NCCL's spinning channels raise its SM
  // activity 13.8 points over the slow rank's, while the tensor pipes, which do
  // the work, read 12.8 % and 12.9 %.
  const Values waiting{{Metric::GpuUtil, 99},
                       {Metric::SmActive, 33.9},
                       {Metric::TensorActive, 12.8},
                       {Metric::Fp32Active, 1.0}};
  const auto f = classify(waiting, {{1, 20.1, 30.0, 12.9}});
  EXPECT_EQ(f.state, GpuState::WaitingOnPeer);
  EXPECT_EQ(f.facts.peer_gpu, 1);
  bool judged_by_math = false;
  for (const auto& e : f.evidence) judged_by_math = judged_by_math || e.key == "peer_math_ratio";
  EXPECT_TRUE(judged_by_math);
  // Other math (a quarter of this GPU's on the peer) is other work, however close
  // the SM activity.
  EXPECT_EQ(classify(waiting, {{1, 33.0, 30.0, 3.0}}).state, GpuState::SmUnderused);
  // No math pipe at work on either: SM activity decides, as before.
  const Values no_math{
      {Metric::GpuUtil, 98}, {Metric::SmActive, 14.5}, {Metric::TensorActive, 0.5}};
  EXPECT_EQ(classify(no_math, {{0, 13.9, 18.0, 0.4}}).state, GpuState::WaitingOnPeer);
  EXPECT_EQ(classify(no_math, {{0, 30.0, 18.0, 0.4}}).state, GpuState::SmUnderused);
}

// An A100 whose profiling counters came from DCGM (docs/dcgm.md) is told as an H100
// is; where DCGM's readings stop, the note blames DCGM, not the GPU's generation.
TEST(States, DcgmsReadingsOnAnAmpereGpuAndTheirGaps) {
  DeviceInfo a100 = h100();
  a100.name = "NVIDIA A100-SXM4-80GB";
  a100.architecture = "Ampere";
  a100.extra["x_prof_source"] = "dcgm";
  const auto compute = classify({{Metric::GpuUtil, 99},
                                 {Metric::SmActive, 95},
                                 {Metric::TensorActive, 92},
                                 {Metric::DramActive, 25}},
                                {}, a100);
  EXPECT_EQ(compute.state, GpuState::ComputeBound);
  const auto gap = classify({{Metric::GpuUtil, 100}, {Metric::MemUtil, 30}}, {}, a100);
  EXPECT_EQ(gap.state, GpuState::Busy);
  EXPECT_NE(all_notes(gap).find("DCGM gave SM activity at the start but not at this time"),
            std::string::npos)
      << all_notes(gap);
  EXPECT_EQ(all_notes(gap).find("GPM needs Hopper"), std::string::npos) << all_notes(gap);
}

TEST(States, WithoutSmActivityTheEngineSaysWhatItCannotTell) {
  DeviceInfo a100 = h100();
  a100.name = "NVIDIA A100-SXM4-80GB";
  // Kernels resident all the time are work (issue 44: `unknown` turned them into
  // start-up and tear-down); that is measured, how well they use the SMs is not.
  const auto busy = classify({{Metric::GpuUtil, 100}, {Metric::MemUtil, 30}}, {}, a100);
  EXPECT_EQ(busy.state, GpuState::Busy);
  EXPECT_GE(busy.confidence, 0.75);
  EXPECT_TRUE(has_evidence(busy, "mem_util"));
  EXPECT_NE(all_notes(busy).find("GPM needs Hopper or newer (this GPU is Ampere)"),
            std::string::npos)
      << all_notes(busy);
  EXPECT_NE(all_notes(busy).find("whether they fill the SMs needs SM activity"), std::string::npos);
  // Just over the part-time line: busy, but barely clear of host_bound.
  const auto edge = classify({{Metric::GpuUtil, 72}}, {}, a100);
  EXPECT_EQ(edge.state, GpuState::Busy);
  EXPECT_LT(edge.confidence, 0.6);
  // Nothing in its words or fixes claims what the SMs did.
  const auto words = describe_state(busy, hardware_limits(a100));
  EXPECT_NE(words.find("not measured"), std::string::npos) << words;
  const auto fixes = fixes_for_state(busy, steady(a100, {{Metric::GpuUtil, 100}}),
                                     hardware_limits(a100), FixContext{});
  ASSERT_FALSE(fixes.empty());
  EXPECT_EQ(fixes.front().find("more blocks"), std::string::npos) << fixes.front();
  EXPECT_NE(fixes.front().find("gpulens run --kernels"), std::string::npos) << fixes.front();
  const auto part = classify({{Metric::GpuUtil, 40}}, {}, a100);
  EXPECT_EQ(part.state, GpuState::HostBound);
  EXPECT_LT(part.confidence, 0.5);
  EXPECT_EQ(classify({{Metric::GpuUtil, 0}}, {}, a100).state, GpuState::Idle);
  // Where PCIe was measured without SM activity (another recorder), copy engines
  // at work with no kernel are copy time, not a wait on the host.
  const auto copies = classify({{Metric::GpuUtil, 0}, {Metric::PcieRxMibs, 20000}}, {}, a100);
  EXPECT_EQ(copies.state, GpuState::PcieBound);
  EXPECT_LT(copies.confidence, 0.5);
  const auto copy = classify({{Metric::GpuUtil, 99}, {Metric::MemUtil, 100}}, {}, a100);
  EXPECT_EQ(copy.state, GpuState::MemoryBound);
  EXPECT_LT(copy.confidence, 0.5);
  // The memory controller's busy time is not bandwidth: words and fix say so.
  const auto copy_words = describe_state(copy, hardware_limits(a100));
  EXPECT_EQ(copy_words.find("DRAM bandwidth is the limit"), std::string::npos) << copy_words;
  EXPECT_NE(copy_words.find("memory controller is busy"), std::string::npos) << copy_words;
  const auto copy_fixes =
      fixes_for_state(copy, steady(a100, {{Metric::GpuUtil, 99}, {Metric::MemUtil, 100}}),
                      hardware_limits(a100), FixContext{});
  ASSERT_FALSE(copy_fixes.empty());
  EXPECT_NE(copy_fixes.front().find("was not measured"), std::string::npos) << copy_fixes.front();
  EXPECT_EQ(copy_fixes.front().find("mixed precision"), std::string::npos) << copy_fixes.front();
}

TEST(States, NothingMeasuredIsUnknown) {
  const auto f = classify({{Metric::PowerW, 100}});
  EXPECT_EQ(f.state, GpuState::Unknown);
  EXPECT_EQ(f.confidence, 0);
}

TEST(Throttle, PowerCapWithClocksBelowMaximum) {
  const auto w = steady(
      h100(), {{Metric::ClockEventReasons, 4}, {Metric::SmClockMhz, 1365}, {Metric::PowerW, 697}});
  const auto t = detect_throttle(w, hardware_limits(h100()), Thresholds{});
  EXPECT_TRUE(t.throttled);
  EXPECT_EQ(t.cause, "power cap (software)");
  EXPECT_NE(describe_throttle(t).find("1365 of 1980 MHz"), std::string::npos);
}

TEST(Throttle, ReasonWithoutClockLossIsNotAThrottle) {
  const auto w = steady(h100(), {{Metric::ClockEventReasons, 4}, {Metric::SmClockMhz, 1980}});
  EXPECT_FALSE(detect_throttle(w, hardware_limits(h100()), Thresholds{}).throttled);
}

TEST(Throttle, IdleReasonIsNotAThrottle) {
  const auto w = steady(h100(), {{Metric::ClockEventReasons, 1}, {Metric::SmClockMhz, 345}});
  EXPECT_FALSE(detect_throttle(w, hardware_limits(h100()), Thresholds{}).throttled);
}

TEST(Throttle, ThermalCause) {
  const auto w = steady(h100(), {{Metric::ClockEventReasons, 0x40}, {Metric::SmClockMhz, 1200}});
  const auto t = detect_throttle(w, hardware_limits(h100()), Thresholds{});
  EXPECT_TRUE(t.throttled);
  EXPECT_NE(t.cause.find("thermal"), std::string::npos);
  EXPECT_FALSE(fixes_for_throttle(t).empty());
}

}  // namespace
}  // namespace gpulens::diagnosis

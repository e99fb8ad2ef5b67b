// SPDX-License-Identifier: Apache-2.0
// What a window measured, as the classifier reads it (src/diagnosis/state_facts.cpp):
// the ratios to the hardware's limits, the busiest peer, and the fallbacks when a
// counter is missing. The verdicts built on these are in state_test.cpp.
#include "diagnosis/state_facts.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::h100;

// A 5 s window of identical samples at 10 Hz on an H100, measured.
StateFacts facts_of(std::initializer_list<std::pair<Metric, double>> values,
                    const std::vector<PeerActivity>& peers = {}) {
  const HardwareLimits hw = hardware_limits(h100());
  SampleWindow w(WindowSettings{}, hw);
  for (int i = 0; i < 50; ++i) {
    Sample s;
    s.t = 1000 + 0.1 * i;
    for (const auto& [m, v] : values) s.values.set(m, v);
    w.push(s);
  }
  return measure_state_facts(w.stats(), hw, Thresholds{}, peers);
}

TEST(StateFacts, SmRatioIsOverKernelTimeWhichIsNeverBelowSmActivity) {
  const StateFacts half = facts_of({{Metric::GpuUtil, 80}, {Metric::SmActive, 40}});
  ASSERT_TRUE(half.sm_ratio);
  EXPECT_DOUBLE_EQ(*half.sm_ratio, 0.5);
  // SM activity above utilization: the two averaged over different intervals, so
  // kernel time is at least the SM activity and the ratio is 1, not 1.5.
  const StateFacts over = facts_of({{Metric::GpuUtil, 40}, {Metric::SmActive, 60}});
  ASSERT_TRUE(over.sm_ratio);
  EXPECT_DOUBLE_EQ(*over.sm_ratio, 1.0);
  // Under 1 % of kernel time there is no ratio to speak of.
  EXPECT_FALSE(facts_of({{Metric::GpuUtil, 0.5}, {Metric::SmActive, 0.2}}).sm_ratio);
}

TEST(StateFacts, ShareOfTheLinkFollowsTheBusierDirection) {
  const HardwareLimits hw = hardware_limits(h100());
  ASSERT_TRUE(hw.pcie_mibs);
  const StateFacts in = facts_of({{Metric::PcieRxMibs, 20000}, {Metric::PcieTxMibs, 100}});
  EXPECT_TRUE(in.pcie_host_to_device);
  ASSERT_TRUE(in.pcie_share);
  EXPECT_DOUBLE_EQ(*in.pcie_share, 20000 / *hw.pcie_mibs);
  EXPECT_TRUE(in.copying);
  const StateFacts out = facts_of({{Metric::PcieRxMibs, 100}, {Metric::PcieTxMibs, 5000}});
  EXPECT_FALSE(out.pcie_host_to_device);
  EXPECT_DOUBLE_EQ(*out.pcie_mibs, 5000);
}

TEST(StateFacts, CommandTrafficToTheGpuIsNotCopying) {
  // ~460 MiB/s host to device is a launch-bound job's pushbuffers, not copies; the
  // same traffic device to host is copies.
  EXPECT_FALSE(facts_of({{Metric::PcieRxMibs, 460}, {Metric::PcieTxMibs, 20}}).copying);
  EXPECT_TRUE(facts_of({{Metric::PcieRxMibs, 20}, {Metric::PcieTxMibs, 460}}).copying);
}

TEST(StateFacts, TheBusiestPeerIsTheOneKept) {
  std::vector<PeerActivity> peers(3);
  peers[0].gpu = 1;
  peers[0].sm_active = 10;
  peers[1].gpu = 2;
  peers[1].sm_active = 70;
  peers[2].gpu = 3;  // its SM activity unknown
  const StateFacts f = facts_of({{Metric::SmActive, 5}}, peers);
  ASSERT_TRUE(f.peer_sm_active);
  EXPECT_DOUBLE_EQ(*f.peer_sm_active, 70);
  EXPECT_EQ(f.peer_gpu, 2);
  EXPECT_FALSE(facts_of({{Metric::SmActive, 5}}).peer_sm_active);
}

TEST(StateFacts, MemoryHeldFallsBackToDeviceMemoryInUse) {
  // No process list (another container's process may be invisible): the device's
  // memory in use stands for what is held.
  const HardwareLimits hw = hardware_limits(h100());
  ASSERT_TRUE(hw.mem_total_mib);
  const StateFacts f = facts_of({{Metric::MemUsedMib, 40000}});
  ASSERT_TRUE(f.mem_held_mib);
  EXPECT_DOUBLE_EQ(*f.mem_held_mib, 40000);
  ASSERT_TRUE(f.mem_held_share);
  EXPECT_DOUBLE_EQ(*f.mem_held_share, 40000 / *hw.mem_total_mib);
}

TEST(StateFacts, TheBusiestMathPipeAndTheIntegerShare) {
  const StateFacts f = facts_of({{Metric::SmActive, 40},
                                 {Metric::TensorActive, 30},
                                 {Metric::Fp32Active, 45},
                                 {Metric::IntActive, 20}});
  ASSERT_TRUE(f.float_pipes);
  EXPECT_DOUBLE_EQ(*f.float_pipes, 45);
  ASSERT_TRUE(f.int_share);
  EXPECT_DOUBLE_EQ(*f.int_share, 0.5);
  EXPECT_FALSE(facts_of({{Metric::SmActive, 40}}).float_pipes);  // no pipe read: unknown
}

}  // namespace
}  // namespace gpulens::diagnosis

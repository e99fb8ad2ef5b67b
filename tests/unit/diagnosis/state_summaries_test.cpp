// SPDX-License-Identifier: Apache-2.0
// Each state's summary sentence (state_summaries.cpp) from the facts it reads,
// including the branches a state takes on what was and was not measured.
#include <gtest/gtest.h>

#include <string>

#include "diagnosis/fix_texts.hpp"
#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

HardwareLimits summary_limits() {
  return hardware_limits(testing::h100());
}

StateFinding finding_with(const StateFacts& facts) {
  StateFinding f;
  f.facts = facts;
  return f;
}

TEST(StateSummaries, IdleAndIdleHoldingMemory) {
  StateFacts f;
  f.gpu_util = 0;
  EXPECT_EQ(summary::idle(finding_with(f), summary_limits()), "No kernel ran (utilization 0 %).");
  f.mem_held_mib = 3584;
  f.mem_held_share = 0.45;
  EXPECT_EQ(summary::idle_holding_memory(finding_with(f), summary_limits()),
            "No kernel ran, but 3.5 GiB (45 % of device memory) is held.");
}

TEST(StateSummaries, MemoryBoundSaysWhatItWasJudgedFrom) {
  StateFacts f;
  f.gpu_util = 90;
  f.mem_util = 70;
  const auto classic = summary::memory_bound(finding_with(f), summary_limits());
  EXPECT_NE(classic.find("memory controller is busy 70 %"), std::string::npos) << classic;
  f.dram_active = 80;
  f.dram_share = 0.9;
  const auto dram = summary::memory_bound(finding_with(f), summary_limits());
  EXPECT_NE(dram.find("DRAM bandwidth is the limit: 80 % of peak (90 % of the practical"),
            std::string::npos)
      << dram;
  f.memory_stall = true;
  f.sm_active = 95;
  f.float_pipes = 3;
  const auto stall = summary::memory_bound(finding_with(f), summary_limits());
  EXPECT_NE(stall.find("The warps wait on memory"), std::string::npos) << stall;
  EXPECT_NE(stall.find("(busiest 3 %)"), std::string::npos) << stall;
}

TEST(StateSummaries, LinksNameTheirRateAndShareWhenKnown) {
  StateFacts f;
  f.pcie_mibs = 10000;
  f.sm_active = 2;
  f.pcie_host_to_device = false;
  const auto pcie = summary::pcie_bound(finding_with(f), summary_limits());
  EXPECT_NE(pcie.find("PCIe device-to-host at"), std::string::npos) << pcie;
  EXPECT_EQ(pcie.find("of the link"), std::string::npos) << pcie;
  f.pcie_share = 0.2;
  EXPECT_NE(summary::pcie_bound(finding_with(f), summary_limits()).find("(20 % of the link)"),
            std::string::npos);
  f.nvlink_mibs = 100000;
  f.nvlink_share = 0.5;
  const auto nvlink = summary::interconnect_bound(finding_with(f), summary_limits());
  EXPECT_NE(nvlink.find("(50 % of the links) while SM activity is only 2 %"), std::string::npos)
      << nvlink;
}

TEST(StateSummaries, HostBoundByWhatTheGpuWaitsOn) {
  StateFacts f;
  f.gpu_util = 10;
  EXPECT_EQ(summary::host_bound(finding_with(f), summary_limits()),
            "Kernels run only 10 % of the time: the GPU waits on something else.");
  f.sm_active = 9;
  f.sm_ratio = 0.9;
  EXPECT_NE(summary::host_bound(finding_with(f), summary_limits()).find("idle 90 % of the time"),
            std::string::npos);
  f.waits_on_process = true;
  f.process_cpu_pct = 100;
  EXPECT_NE(summary::host_bound(finding_with(f), summary_limits()).find("busy (100 %)"),
            std::string::npos);
}

TEST(StateSummaries, SmUnderusedCountsTheBusySms) {
  StateFacts f;
  f.gpu_util = 100;
  f.sm_active = 0.76;
  const auto without = summary::sm_underused(finding_with(f), summary_limits());
  EXPECT_EQ(without, "A kernel runs 100 % of the time but only 0.76 % of the GPU works.");
  f.busy_sms = 1;
  EXPECT_EQ(summary::sm_underused(finding_with(f), summary_limits()),
            "A kernel runs 100 % of the time but only 0.76 % of the GPU works (about 1 of 132 "
            "SMs busy).");
}

TEST(StateSummaries, WaitingOnPeerTellsASlowerRankFromABusyOne) {
  StateFacts f;
  f.gpu_util = 100;
  f.sm_active = 1;
  f.peer_gpu = 3;
  f.peer_sm_active = 80;
  f.peer_util = 40;
  const auto busy_peer = summary::waiting_on_peer(finding_with(f), summary_limits());
  EXPECT_NE(busy_peer.find("GPU 3 of the same job is busy (80 %)"), std::string::npos) << busy_peer;
  f.peer_slow_rank = true;
  const auto slow = summary::waiting_on_peer(finding_with(f), summary_limits());
  EXPECT_NE(slow.find("has one resident only 40 % of the time"), std::string::npos) << slow;
}

TEST(StateSummaries, BusyLaunchComputeAndUnknown) {
  StateFacts f;
  f.gpu_util = 95;
  f.sm_active = 90;
  EXPECT_EQ(summary::compute_bound(finding_with(f), summary_limits()),
            "The SMs are busy: 90 % SM activity at 95 % utilization.");
  f.tensor_active = 60;
  EXPECT_NE(summary::compute_bound(finding_with(f), summary_limits()).find(", tensor pipes 60 %"),
            std::string::npos);
  EXPECT_NE(summary::launch_bound(finding_with(f), summary_limits()).find("the kernels are tiny"),
            std::string::npos);
  StateFacts b;
  b.gpu_util = 50;
  EXPECT_EQ(summary::busy(finding_with(b), summary_limits()).find(", the memory controller"),
            std::string::npos);
  b.mem_util = 30;
  EXPECT_NE(summary::busy(finding_with(b), summary_limits())
                .find("50 % of the time, the memory controller busy 30 %;"),
            std::string::npos);
  StateFinding none;
  EXPECT_EQ(summary::unknown(none, summary_limits()), "Not enough data yet.");
  none.cannot_tell = {"no utilization was read", "second"};
  EXPECT_EQ(summary::unknown(none, summary_limits()), "Cannot tell: no utilization was read.");
}

}  // namespace
}  // namespace gpulens::diagnosis

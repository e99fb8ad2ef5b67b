// SPDX-License-Identifier: Apache-2.0
// Funnel, energy and cost arithmetic on small traces whose answers are known.
#include "verdict/usage.hpp"

#include <gtest/gtest.h>

#include "verdict/cost.hpp"

namespace gpulens::verdict {
namespace {

ProcessSample proc(std::uint32_t pid) {
  ProcessSample p;
  p.pid = pid;
  return p;
}

// Ten one-second samples: a kernel runs in the last six, SMs half busy then,
// tensor pipes a quarter; power 100 W idle and 300 W busy.
Trace ten_seconds(bool with_energy) {
  Trace t;
  t.header.interval_s = 1.0;
  DeviceInfo d;
  d.index = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  t.header.devices.push_back(d);
  double energy_mj = 5e6;
  for (int i = 1; i <= 10; ++i) {
    Sample s;
    s.t = 1000 + i;
    const bool busy = i > 4;
    s.values.set(Metric::GpuUtil, busy ? 100.0 : 0.0);
    s.values.set(Metric::SmActive, busy ? 50.0 : 0.0);
    s.values.set(Metric::TensorActive, busy ? 25.0 : 0.0);
    s.values.set(Metric::MemUsedMib, i > 2 ? 20000.0 : 500.0);
    s.values.set(Metric::PowerW, busy ? 300.0 : 100.0);
    s.values.set(Metric::SmClockMhz, 915.0);
    energy_mj += (busy ? 300.0 : 100.0) * 1000;
    if (with_energy && i % 3 == 1) s.values.set(Metric::EnergyMj, energy_mj);
    t.samples.push_back(s);
  }
  return t;
}

TEST(ReportUsage, FunnelSharesAreTimeWeightedShares) {
  const auto usage = measure_usage(ten_seconds(false), {0});
  ASSERT_EQ(usage.size(), 1u);
  const auto& u = usage[0];
  EXPECT_DOUBLE_EQ(u.covered_s, 10);
  EXPECT_EQ(u.allocated_basis, AllocatedBasis::Memory);
  EXPECT_DOUBLE_EQ(u.allocated.ratio().value(), 0.8);  // memory held from second 3
  EXPECT_DOUBLE_EQ(u.kernel.ratio().value(), 0.6);
  EXPECT_DOUBLE_EQ(u.sm.ratio().value(), 0.3);
  EXPECT_DOUBLE_EQ(u.tensor.ratio().value(), 0.15);
  const auto f = build_funnel(total_usage(usage), 2.0);
  ASSERT_EQ(f.steps.size(), 4u);
  EXPECT_EQ(f.steps[0].id, "allocated");
  EXPECT_DOUBLE_EQ(f.step("kernel_active")->gpu_hours.value(), 1.2);
  EXPECT_DOUBLE_EQ(f.step("kernel_active")->of_previous.value(), 0.75);
  EXPECT_DOUBLE_EQ(f.step("sm_active")->of_previous.value(), 0.5);
  EXPECT_DOUBLE_EQ(f.step("tensor_active")->of_previous.value(), 0.5);
}

TEST(ReportUsage, ProcessListsDecideAllocationWhenRecorded) {
  auto t = ten_seconds(false);
  for (std::size_t i = 0; i < t.samples.size(); ++i) {
    t.samples[i].procs.emplace();
    if (i >= 5) t.samples[i].procs->push_back(proc(42));
  }
  const auto u = measure_usage(t, {0})[0];
  EXPECT_EQ(u.allocated_basis, AllocatedBasis::Processes);
  // A kernel running means someone holds the GPU, even with no process listed.
  EXPECT_DOUBLE_EQ(u.allocated.ratio().value(), 0.6);
}

// A pod holds the GPU by the kubelet's word for the first 6 s, then the agent
// fell back to processes (the kubelet stopped answering): the funnel says the
// allocation is the scheduler's for 60 % of the time.
TEST(ReportUsage, TheFunnelSaysWhenTheSchedulersWordWasMissing) {
  auto t = ten_seconds(false);
  GpuAllocation pod;
  pod.scheduler = "kubernetes";
  pod.namespace_name = "ml";
  pod.pod = "nb-0";
  for (std::size_t i = 0; i < t.samples.size(); ++i) {
    t.samples[i].procs.emplace();
    if (i < 6) t.samples[i].allocations = std::vector<GpuAllocation>{pod};
  }
  const auto u = measure_usage(t, {0})[0];
  EXPECT_EQ(u.allocated_basis, AllocatedBasis::Scheduler);
  EXPECT_DOUBLE_EQ(u.scheduler_s, 6);
  const auto total = total_usage({u});
  const Funnel f = build_funnel(total, 10.0 / 3600);
  ASSERT_NE(f.step("allocated"), nullptr);
  EXPECT_EQ(f.step("allocated")->basis,
            "the scheduler's allocation (Slurm's prolog, the kubelet's pod-resources API) for 60 % "
            "of the time, processes for the rest (it was not read then)");
  for (auto& s : t.samples) s.allocations = std::vector<GpuAllocation>{pod};
  const Funnel whole = build_funnel(total_usage(measure_usage(t, {0})), 10.0 / 3600);
  EXPECT_EQ(whole.step("allocated")
                ->basis.rfind("the scheduler's allocation (Slurm's prolog, "
                              "the kubelet's pod-resources API), and",
                              0),
            0u)
      << whole.step("allocated")->basis;
}

TEST(ReportUsage, EnergyFromTheCounterWhereReadAndPowerInBetween) {
  // Power alone: 4 x 100 + 6 x 300 = 2200 J.
  EXPECT_DOUBLE_EQ(measure_usage(ten_seconds(false), {0})[0].energy_j.value(), 2200);
  // Counter read at samples 1, 4, 7 and 10: the deltas cover 2..10, the first
  // sample's second comes from power: the same 2200 J.
  const auto u = measure_usage(ten_seconds(true), {0})[0];
  EXPECT_DOUBLE_EQ(u.energy_j.value(), 2200);
  EXPECT_EQ(u.energy_basis, "energy counter");
}

TEST(ReportUsage, TensorEstimateScalesByTheClockThePeakAssumes) {
  UsageOptions o;
  o.peak_clock_mhz[0] = 1830;
  const auto u = measure_usage(ten_seconds(false), {0}, o)[0];
  EXPECT_TRUE(u.clock_corrected);
  EXPECT_NEAR(u.tensor_at_peak_clock.ratio().value(), 0.15 * 0.5, 1e-12);
  const auto plain = measure_usage(ten_seconds(false), {0})[0];
  EXPECT_FALSE(plain.clock_corrected);
  EXPECT_NEAR(plain.tensor_at_peak_clock.ratio().value(), 0.15, 1e-12);
}

TEST(ReportUsage, WindowAndUnknownGpus) {
  UsageOptions o;
  o.from = 1005;
  o.to = 1010;
  const auto usage = measure_usage(ten_seconds(false), {0, 3}, o);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_DOUBLE_EQ(usage[0].covered_s, 6);
  EXPECT_DOUBLE_EQ(usage[0].kernel.ratio().value(), 1.0);
  EXPECT_EQ(usage[1].covered_s, 0);
  EXPECT_FALSE(usage[1].kernel.ratio());  // not measured is not 0
}

TEST(ReportCost, SplitsTheBillIntoEdgesIdleInefficiencyAndWork) {
  // 10 GPU-hours in 5 wall hours at $2: $20; start-up and tear-down 10 %, idle
  // states 30 %, SMs 30 %: the working states (60 %) leave 30 % with idle SMs.
  const Cost c = compute_cost(2.0, 10.0, 5 * 3600.0, {0.1, 0.3, 0.3});
  EXPECT_DOUBLE_EQ(c.total.value(), 20);
  EXPECT_DOUBLE_EQ(c.edges.value(), 2);
  EXPECT_DOUBLE_EQ(c.idle.value(), 6);
  EXPECT_DOUBLE_EQ(c.inefficiency.value(), 6);
  EXPECT_DOUBLE_EQ(c.useful.value(), 6);
  // Start-up and tear-down are paid but are not waste of the job.
  EXPECT_DOUBLE_EQ(c.waste.value(), 12);
  EXPECT_DOUBLE_EQ(c.waste_share.value(), 0.6);
  // $12 wasted per 5 hours, for 730 hours a month.
  EXPECT_DOUBLE_EQ(c.monthly_waste.value(), 12.0 / 5 * 730);
  EXPECT_DOUBLE_EQ(c.monthly_cost.value(), 20.0 / 5 * 730);
}

TEST(ReportCost, NoPriceNoMoneyAndNoSmActivityNoInefficiency) {
  const Cost none = compute_cost(std::nullopt, 10, 3600, {0, 0.5, 0.2});
  EXPECT_FALSE(none.total);
  EXPECT_FALSE(none.waste);
  const Cost no_sm = compute_cost(1.0, 10, 3600, {0.1, 0.4, std::nullopt});
  EXPECT_DOUBLE_EQ(no_sm.idle.value(), 4);
  EXPECT_FALSE(no_sm.inefficiency);
  EXPECT_FALSE(no_sm.useful);
  // The working states are priced as working, how well not measured (issue 44).
  EXPECT_DOUBLE_EQ(no_sm.working_unmeasured.value(), 5);
  EXPECT_DOUBLE_EQ(no_sm.waste.value(), 4);
  // With SM activity there is no unmeasured part.
  EXPECT_FALSE(compute_cost(1.0, 10, 3600, {0, 0.5, 0.2}).working_unmeasured);
  // SM activity above the working states' share does not make inefficiency negative.
  const Cost over = compute_cost(1.0, 10, 3600, {0, 0.5, 0.55});
  EXPECT_DOUBLE_EQ(over.inefficiency.value(), 0);
  EXPECT_DOUBLE_EQ(over.useful.value(), 5);
}

}  // namespace
}  // namespace gpulens::verdict

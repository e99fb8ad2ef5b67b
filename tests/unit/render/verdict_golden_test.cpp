// SPDX-License-Identifier: Apache-2.0
// Golden verdicts for the reference recordings (text and JSON, through the real
// binary), and the arithmetic that must hold whatever the diagnosis says:
// funnel order, cost parts adding up, shares adding up to one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::render {
namespace {

using testing::expect_golden;
using testing::reference_trace;
using testing::run_gpulens;

const std::string kFixtureDir = GPULENS_FIXTURES;
const std::string kData = std::string(GPULENS_SOURCE_DIR) + "/data";
const char* kTraces[] = {"calibration-h100", "training-h100", "multi-gpu-h200x2"};

std::string trace_arg(const std::string& name) {
  return reference_trace(name) + " --lenient";
}

TEST(ReportGolden, TextAndJsonOfTheReferenceRecordings) {
  for (const std::string name : kTraces) {
    const auto text = run_gpulens("report " + trace_arg(name));
    ASSERT_EQ(text.exit_code, 0) << text.err;
    expect_golden("report-" + name + ".txt", text.out);
    const auto json = run_gpulens("report --format json " + trace_arg(name));
    ASSERT_EQ(json.exit_code, 0) << json.err;
    expect_golden("report-" + name + ".json", json.out);
  }
}

class ReportArithmetic : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportArithmetic, FunnelCostAndSharesAreConsistent) {
  auto trace = read_trace(std::string(GPULENS_SOURCE_DIR) + "/" + reference_trace(GetParam()),
                          TraceReadOptions{.lenient = true});
  ASSERT_TRUE(trace) << trace.error().message;
  auto models = verdict::GpuModelTable::load(kData + "/gpu_peaks.json");
  auto prices = verdict::PriceTable::load(kData + "/prices.json");
  ASSERT_TRUE(models && prices);
  verdict::VerdictOptions o;
  o.models = &*models;
  o.prices = &*prices;
  const verdict::Verdict v = verdict::build_verdict(*trace, o);
  ASSERT_TRUE(v.measured);
  EXPECT_NEAR(v.gpu_hours, v.duration_s * static_cast<double>(v.devices.size()) / 3600, 1e-12);
  // Each step of the funnel is a subset of the one before (up to counter noise).
  std::optional<double> previous = 1.0;
  for (const auto& s : v.funnel.steps) {
    ASSERT_TRUE(s.share) << s.id;
    EXPECT_LE(*s.share, *previous + 0.02) << s.id;
    EXPECT_NEAR(*s.gpu_hours, *s.share * v.gpu_hours, 1e-12);
    previous = s.share;
  }
  // The bill adds up, at the table's price for the model.
  const verdict::Cost& c = v.cost;
  ASSERT_TRUE(c.total && c.edges && c.idle && c.inefficiency && c.useful);
  EXPECT_NEAR(*c.total, v.gpu_hours * *c.price_per_gpu_hour, 1e-12);
  EXPECT_NEAR(*c.edges + *c.idle + *c.inefficiency + *c.useful, *c.total, 1e-12);
  EXPECT_NEAR(*c.monthly_waste, *c.waste / (v.duration_s / 3600) * 730, 1e-9);
  // One accounting: the states (start-up and tear-down apart) add up to one, and
  // the cost's idle and edge lines are the same shares of the bill.
  double shares = v.edges_share;
  double idle = 0;
  for (const auto& s : v.states) {
    shares += s.share;
    if (s.state == diagnosis::GpuState::Idle || s.state == diagnosis::GpuState::IdleHoldingMemory)
      idle += s.share;
  }
  EXPECT_NEAR(shares, 1.0, 1e-9);
  EXPECT_NEAR(*c.idle, *c.total * idle, 1e-12);
  EXPECT_NEAR(*c.edges, *c.total * v.edges_share, 1e-12);
  // The SMs at work are the funnel's SM-active hours.
  EXPECT_NEAR(*c.useful, *c.total * *v.funnel.step("sm_active")->share, 1e-12);
  EXPECT_LE(v.fixes.size(), 3u);
  EXPECT_FALSE(v.fixes.empty());
}

INSTANTIATE_TEST_SUITE_P(References, ReportArithmetic,
                         ::testing::Values("calibration-h100", "training-h100",
                                           "multi-gpu-h200x2"));

TEST(ReportVerdict, TrainingRecordingNamesTheStarvedPhaseAndItsFix) {
  auto trace = read_trace(kFixtureDir + "/traces/training-h100.trace.jsonl",
                          TraceReadOptions{.lenient = true});
  ASSERT_TRUE(trace);
  const verdict::Verdict v = verdict::build_verdict(*trace, verdict::VerdictOptions{});
  EXPECT_FALSE(v.cost.total);  // no price table, no --price: no money figures
  bool host_bound = false;
  for (const auto& s : v.states)
    host_bound = host_bound || s.state == diagnosis::GpuState::HostBound;
  EXPECT_TRUE(host_bound);
  ASSERT_EQ(v.phases.size(), 3u);
  ASSERT_FALSE(v.phases[1].gpus.empty());
  EXPECT_EQ(v.phases[1].gpus[0].state, diagnosis::GpuState::HostBound);
  // The dominant bottleneck's fix leads: the input pipeline.
  ASSERT_FALSE(v.fixes.empty());
  EXPECT_NE(v.fixes[0].find("DataLoader"), std::string::npos) << v.fixes[0];
}

TEST(ReportVerdict, GpuSelectionAndPrice) {
  auto trace = read_trace(kFixtureDir + "/traces/multi-gpu-h200x2.trace.jsonl");
  ASSERT_TRUE(trace);
  verdict::VerdictOptions o;
  o.gpus = {1};
  o.price_per_gpu_hour = 10;
  const verdict::Verdict v = verdict::build_verdict(*trace, o);
  ASSERT_EQ(v.devices.size(), 1u);
  EXPECT_EQ(v.devices[0].index, 1);
  EXPECT_EQ(v.gpus_basis, "--gpus");
  EXPECT_EQ(v.cost.price_source, "--price");
  EXPECT_NEAR(*v.cost.total, v.gpu_hours * 10, 1e-12);
  for (const auto& run : v.diagnosis.timeline) EXPECT_EQ(run.gpu, 1);
}

}  // namespace
}  // namespace gpulens::render

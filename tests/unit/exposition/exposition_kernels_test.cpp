// SPDX-License-Identifier: Apache-2.0
// The jobs' kernel summaries on /metrics (exposition_kernels.cpp):
// gpulens_kernel_*_seconds_total, counters per GPU and pod, labels escaped, HELP
// saying they are traced seconds, and only while summaries come.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "agent/kernel_series.hpp"
#include "exposition/exposition.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

constexpr std::int64_t kBase = 1'700'000'000'000'000'000;

agent::KernelWindow window(std::string kernel) {
  agent::KernelWindow w;
  w.gpu = 1;
  w.start_unix_ns = kBase;
  w.end_unix_ns = kBase + 2'000'000'000;
  w.top.push_back({std::move(kernel), 4, 1'500'000'000});
  w.other_ns = 250'000'000;
  w.idle_ns = 250'000'000;
  w.collectives.ns = 125'000'000;
  w.kube = {"team-a", "train-0", "main"};
  return w;
}

TEST(KernelMetrics, CountersPerGpuAndPod) {
  const auto snap = gpulens::testing::fixed_snapshot();
  agent::KernelSeries series;
  series.add(window("void at::native::gemm<float>(float*)"), 0);
  std::string out;
  render_kernel_metrics(out, snap, {series.rows(1), series.retired()});
  const std::string labels =
      "gpu=\"1\",uuid=\"GPU-00000001\",model=\"NVIDIA H100 80GB HBM3\",hostname=\"node-17\","
      "namespace=\"team-a\",pod=\"train-0\",container=\"main\"";
  EXPECT_NE(out.find("# TYPE gpulens_kernel_seconds_total counter"), std::string::npos);
  EXPECT_NE(out.find("traced"), std::string::npos) << "HELP says what the seconds are";
  EXPECT_NE(out.find("gpulens_kernel_seconds_total{" + labels + ",kernel=\"gemm\"} 1.5\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("gpulens_kernel_seconds_total{" + labels + ",kernel=\"other\"} 0.25\n"),
            std::string::npos);
  EXPECT_NE(out.find("gpulens_kernel_traced_seconds_total{" + labels + "} 2\n"), std::string::npos);
  EXPECT_NE(out.find("gpulens_kernel_idle_seconds_total{" + labels + "} 0.25\n"),
            std::string::npos);
  EXPECT_NE(out.find("gpulens_kernel_collective_seconds_total{" + labels + "} 0.125\n"),
            std::string::npos);
  EXPECT_NE(out.find("gpulens_kernel_copy_seconds_total{" + labels + "} 0\n"), std::string::npos);
  EXPECT_NE(out.find("gpulens_kernel_memset_seconds_total{" + labels + "} 0\n"), std::string::npos);
}

TEST(KernelMetrics, HostileNamesAreEscapedLabelValues) {
  const auto snap = gpulens::testing::fixed_snapshot();
  agent::KernelSeries series;
  std::string hostile = "bad\"name\\with\nbreak";
  hostile += '\xFF';
  series.add(window(hostile), 0);
  std::string out;
  render_kernel_metrics(out, snap, {series.rows(1), 0});
  EXPECT_NE(out.find("kernel=\"bad\\\"name\\\\with break\xEF\xBF\xBD\"}"), std::string::npos)
      << out;
  // Every sample line is one line with balanced braces.
  std::size_t lines = 0;
  for (std::size_t at = 0, next; (next = out.find('\n', at)) != std::string::npos; at = next + 1) {
    const std::string line = out.substr(at, next - at);
    if (line.starts_with("#")) continue;
    ++lines;
    EXPECT_EQ(std::count(line.begin(), line.end(), '{'), 1) << line;
  }
  EXPECT_EQ(lines, 7u);  // the kernel, other, and five totals
}

// Launch counts only (no trace windows): the launch families, and no traced-time
// series at zero that would read as "traced, and idle".
TEST(KernelMetrics, LaunchCountsAloneGiveLaunchSeriesOnly) {
  const auto snap = gpulens::testing::fixed_snapshot();
  agent::KernelSeries series;
  agent::LaunchDelta d;
  d.gpu = 1;
  d.pod = {"team-a", "train-0", "main"};
  d.kernel_launches = 1000;
  d.graph_launches = 7;
  d.named = {{"gemm", 900}};
  d.unnamed = 100;
  series.add_launches(d, 0);
  std::string out;
  render_kernel_metrics(out, snap, {series.rows(1), 0});
  const std::string labels =
      "gpu=\"1\",uuid=\"GPU-00000001\",model=\"NVIDIA H100 80GB HBM3\",hostname=\"node-17\","
      "namespace=\"team-a\",pod=\"train-0\",container=\"main\"";
  EXPECT_NE(out.find("# TYPE gpulens_kernel_launches_total counter"), std::string::npos);
  EXPECT_NE(out.find("gpulens_kernel_launches_total{" + labels + ",kernel=\"gemm\"} 900\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("gpulens_kernel_launches_total{" + labels + ",kernel=\"other\"} 100\n"),
            std::string::npos);
  EXPECT_NE(out.find("gpulens_graph_launches_total{" + labels + "} 7\n"), std::string::npos);
  EXPECT_EQ(out.find("seconds_total"), std::string::npos) << out;
}

TEST(KernelMetrics, NothingWithoutSummaries) {
  const auto snap = gpulens::testing::fixed_snapshot();
  std::string out;
  render_kernel_metrics(out, snap, {});
  EXPECT_TRUE(out.empty());
  // And render_metrics leaves them out unless the agent receives summaries.
  ExpositionOptions o;
  EXPECT_EQ(render_metrics(snap, o, SelfStats{}).find("gpulens_kernel_"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::exposition

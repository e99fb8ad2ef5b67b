// SPDX-License-Identifier: Apache-2.0
// The per-GPU kernel counters of /metrics: they add up every window, stay within
// `top` named series per GPU whatever the jobs send, and change names only at
// the stated pace.
#include "agent/kernel_series.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "agent/kernel_receiver.hpp"
#include "kernels/record/summary_datagram.hpp"

namespace gpulens::agent {
namespace {

constexpr std::int64_t kSeriesBase = 1'700'000'000'000'000'000;
constexpr std::uint64_t kMs = 1'000'000;

// A 2 s window on `gpu` starting `at_s` after kSeriesBase, with kernels {name, ms}.
KernelWindow window(int gpu, double at_s, std::vector<std::pair<std::string, std::uint64_t>> ks,
                    std::uint64_t other_ms = 0) {
  KernelWindow w;
  w.gpu = gpu;
  w.pid = 100;
  w.start_unix_ns = kSeriesBase + static_cast<std::int64_t>(at_s * 1e9);
  w.end_unix_ns = w.start_unix_ns + 2'000'000'000;
  for (auto& [name, ms] : ks) w.top.push_back({name, 1, ms * kMs});
  w.other_ns = other_ms * kMs;
  w.idle_ns = 500 * kMs;
  w.collectives.ns = 100 * kMs;
  w.copies.ns = 30 * kMs;
  w.memsets.ns = 5 * kMs;
  return w;
}

double named(const KernelSeriesRow& r, const std::string& label) {
  for (const auto& [l, s] : r.named) {
    if (l == label) return s;
  }
  return -1;
}

std::size_t series_count(const std::vector<KernelSeriesRow>& rows, int gpu) {
  std::size_t n = 0;
  for (const auto& r : rows) {
    if (r.gpu == gpu) n += r.named.size() + 6;  // other, traced, idle, collectives, copies, memsets
  }
  return n;
}

TEST(KernelSeries, CountsEveryWindowsSecondsAsCounters) {
  KernelSeries s;
  s.add(window(0, 0, {{"void gemm<float>(float*)", 800}, {"softmax", 200}}, 50), 0);
  s.add(window(0, 20, {{"void gemm<half>(half*)", 700}}), 20);
  const auto rows = s.rows(21);
  ASSERT_EQ(rows.size(), 1u);
  const auto& r = rows[0];
  EXPECT_DOUBLE_EQ(named(r, "gemm"), 1.5);  // both instantiations: one series
  EXPECT_DOUBLE_EQ(named(r, "softmax"), 0.2);
  EXPECT_DOUBLE_EQ(r.other_s, 0.05);
  EXPECT_DOUBLE_EQ(r.traced_s, 4.0);
  EXPECT_DOUBLE_EQ(r.idle_s, 1.0);
  EXPECT_DOUBLE_EQ(r.collective_s, 0.2);
  EXPECT_DOUBLE_EQ(r.copy_s, 0.06);
  EXPECT_DOUBLE_EQ(r.memset_s, 0.01);
}

TEST(KernelSeries, TwoProcessesOfOnePodTraceTheSameMomentsOnce) {
  KernelSeries s;
  KernelWindow a = window(0, 0, {{"a", 100}});
  KernelWindow b = window(0, 0, {{"b", 100}});
  b.pid = 101;
  s.add(a, 0);
  s.add(b, 0);
  const auto rows = s.rows(1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].traced_s, 2.0);  // the union, not 4
  EXPECT_DOUBLE_EQ(rows[0].idle_s, 1.0);    // per process, summed
}

TEST(KernelSeries, AtMostTopNamedPerGpuTheRestInOther) {
  KernelSeriesOptions o;
  o.top = 3;
  KernelSeries s(o);
  s.add(window(0, 0, {{"k1", 500}, {"k2", 400}, {"k3", 300}, {"k4", 200}, {"k5", 100}}, 7), 0);
  const auto rows = s.rows(1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].named.size(), 3u);
  double total = rows[0].other_s;
  for (const auto& [l, secs] : rows[0].named) total += secs;
  EXPECT_NEAR(total, 1.507, 1e-12);  // no time lost
}

TEST(KernelSeries, AFloodOfDistinctNamesStaysWithinTheCap) {
  KernelSeries s;  // top 10
  std::size_t most = 0;
  for (int i = 0; i < 5000; ++i) {
    std::vector<std::pair<std::string, std::uint64_t>> ks;
    for (int k = 0; k < 10; ++k) {
      // Distinct every time, some hostile, some long.
      ks.emplace_back(fmt::format("flood_{}_{}\xFF\n\"{}", i, k, std::string(300, 'x')),
                      10 + static_cast<std::uint64_t>(k));
    }
    s.add(window(0, i, std::move(ks)), i);  // one a second: the rate limit's pace
    most = std::max(most, series_count(s.rows(i), 0));
    ASSERT_LE(s.waiting(), 4 * 10 + 16u);
  }
  EXPECT_LE(most, 10u + 6u);
  // Over 5000 s, each slot changed hands at most once per 10 minutes.
  EXPECT_LE(s.retired(), 10u * (5000 / 600 + 1));
}

TEST(KernelSeries, ANewTopKernelTakesTheWeakestSlotAfterTheHold) {
  KernelSeriesOptions o;
  o.top = 2;
  KernelSeries s(o);
  double t = 0;
  for (; t < 300; t += 20) s.add(window(0, t, {{"a", 900}, {"b", 10}}), t);
  // A phase change: c is now the busiest, b gone quiet.
  for (; t < 590; t += 20) s.add(window(0, t, {{"a", 900}, {"c", 800}}), t);
  auto rows = s.rows(t);
  EXPECT_LT(named(rows[0], "c"), 0) << "b's slot is held for 10 minutes";
  EXPECT_GE(named(rows[0], "b"), 0);
  const double other_before = rows[0].other_s;
  for (; t < 700; t += 20) s.add(window(0, t, {{"a", 900}, {"c", 800}}), t);
  rows = s.rows(t);
  EXPECT_GE(named(rows[0], "a"), 0);
  EXPECT_GT(named(rows[0], "c"), 0);
  EXPECT_LT(named(rows[0], "b"), 0);
  EXPECT_EQ(s.retired(), 1u);
  EXPECT_GT(rows[0].other_s, other_before);  // c's time before it had a series
}

TEST(KernelSeries, QuietKernelsAndPodsAreDroppedAfterTenMinutes) {
  KernelSeries s;
  KernelWindow w = window(0, 0, {{"a", 100}});
  w.kube = {"team", "job-1", "main"};
  s.add(w, 0);
  s.add(window(1, 0, {{"x", 100}}), 0);
  for (double t = 20; t < 700; t += 20) s.add(window(1, t, {{"y", 100}}), t);
  const auto rows = s.rows(700);
  ASSERT_EQ(rows.size(), 1u) << "GPU 0's pod sent nothing for 10 minutes";
  EXPECT_EQ(rows[0].gpu, 1);
  EXPECT_LT(named(rows[0], "x"), 0);
  EXPECT_GT(named(rows[0], "y"), 0);
  EXPECT_GE(s.retired(), 2u);  // a and x
}

TEST(KernelSeries, PodsPerGpuAreBounded) {
  KernelSeries s;
  for (int p = 0; p < 20; ++p) {
    KernelWindow w = window(0, 0, {{fmt::format("k{}", p), 100}});
    w.kube = {"ns", fmt::format("pod-{}", p), ""};
    s.add(w, 0);
  }
  const auto rows = s.rows(1);
  EXPECT_EQ(rows.size(), 9u);  // 8 pods, and the rest without pod labels
  EXPECT_LE(series_count(rows, 0), 10u + 9 * 6);
}

TEST(KernelSeries, TopZeroKeepsOnlyTheTotals) {
  KernelSeriesOptions o;
  o.top = 0;
  KernelSeries s(o);
  s.add(window(0, 0, {{"a", 100}}), 0);
  const auto rows = s.rows(1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].named.empty());
  EXPECT_DOUBLE_EQ(rows[0].other_s, 0.1);
}

// The intake names the pod of the process on that GPU and feeds the counters.
TEST(KernelSeries, IntakeCountsWindowsUnderTheProcessesPod) {
  LiveSnapshot snap;
  snap.seq = 1;
  snap.kube.kubernetes = true;
  snap.kube.by_pod["uid-1"] = sources::KubeRef{"team-a", "train-0", ""};
  GpuLive g;
  Sample sample;
  sample.gpu = 0;
  ProcessSample p;
  p.pid = 4242;
  p.name = "python";
  p.pod = "uid-1";
  sample.procs = std::vector<ProcessSample>{p};
  g.sample = sample;
  snap.gpus.push_back(g);
  kernels::WindowSummary ws;
  ws.start_unix_ns = kSeriesBase;
  ws.end_unix_ns = kSeriesBase + 2'000'000'000;
  kernels::DeviceWork d;
  d.busy_ns = 1'000'000'000;
  d.idle_ns = 1'000'000'000;
  d.top.push_back({"void gemm<float>(float*)", 3, 900'000'000});
  ws.devices.push_back(d);
  KernelStore store;
  KernelSeries series;
  SummaryIntake in(store, {}, &series);
  in.set_clock([] { return static_cast<double>(kSeriesBase) / 1e9; });  // the window's time
  ASSERT_EQ(in.take(kernels::encode_summary(ws), false, PeerCredentials{4242, 1000, 1000}, snap, 0),
            Refusal::None);
  const auto rows = series.rows(1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].pod.namespace_name, "team-a");
  EXPECT_EQ(rows[0].pod.pod, "train-0");
  EXPECT_DOUBLE_EQ(named(rows[0], "gemm"), 0.9);
  EXPECT_EQ(store.query({0, 2e9, {}, {}, 10}).windows.at(0).kube.pod, "train-0");
}

// Launch counts take slots of their own by the same rule: a GPU's `top` named launch
// series whatever the kernel time, and the time's named series untouched by launches.
TEST(KernelSeries, LaunchCountsHaveSlotsOfTheirOwn) {
  KernelSeriesOptions o;
  o.top = 2;
  KernelSeries series(o);
  series.add(window(0, 0, {{"gemm", 900}}), 0);
  LaunchDelta d;
  d.kernel_launches = 1000;
  d.named = {{"a", 400}, {"b", 300}, {"c", 200}, {"d", 50}};
  d.unnamed = 50;
  series.add_launches(d, 1);
  const auto rows = series.rows(1);
  ASSERT_EQ(rows.size(), 1u);
  const KernelSeriesRow& r = rows[0];
  EXPECT_TRUE(r.has_windows);
  EXPECT_TRUE(r.has_launches);
  EXPECT_EQ(r.named.size(), 1u) << "the time's one series";
  EXPECT_EQ(r.named_launches.size(), 2u);
  double sum = r.other_launches;
  for (const auto& [label, n] : r.named_launches) sum += n;
  EXPECT_DOUBLE_EQ(sum, 1000);
  EXPECT_DOUBLE_EQ(r.launches, 1000);
  // A pod that sent nothing for retire_after_s goes, its launch series with it.
  EXPECT_TRUE(series.rows(1 + o.retire_after_s).empty());
}

}  // namespace
}  // namespace gpulens::agent

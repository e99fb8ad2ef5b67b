// SPDX-License-Identifier: Apache-2.0
// The kernel windows across a restart of the agent (agent/kernel_history.*): what
// the receiver stores goes to the history writer's queue, and a new KernelStore
// on the same file answers with every field intact; a corrupt row is skipped and
// counted; without a history file nothing is read or written.
#include "agent/kernel_history.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "agent/kernel_receiver.hpp"
#include "kernels/record/summary_datagram.hpp"
#include "server_support.hpp"
#include "store/store_writer.hpp"
#include "wait_for.hpp"

namespace gpulens::agent {
namespace {

constexpr std::int64_t kBase = 1'795'200'000'000'000'000;

KernelWindow window(int gpu, std::uint32_t pid, std::int64_t end_s) {
  KernelWindow w;
  w.gpu = gpu;
  w.device = 1;
  w.pid = pid;
  w.uid = 1001;
  w.process = "python3";
  w.kube = {"ml-team", "llama-finetune-7f9c8d6b5-x2k4p", "trainer"};
  w.end_unix_ns = kBase + end_s * 1'000'000'000;
  w.start_unix_ns = w.end_unix_ns - 20'000'000'000;
  w.window = true;
  w.busy_ns = 15'000'000'000;
  w.idle_ns = 5'000'000'000;
  w.top = {{"void gemm<cutlass::bfloat16_t>(float*)", 300, 9'000'000'000},
           {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 20, 3'000'000'000}};
  w.other_kernels = 40;
  w.other_launches = 900;
  w.other_ns = 3'000'000'000;
  w.collectives = {20, 0, 3'000'000'000};
  w.copies = {3, 1 << 20, 4'000'000};
  w.memsets = {2, 4096, 10'000};
  w.cupti_dropped = 5;
  w.summaries_dropped = 2;
  return w;
}

void expect_same(const KernelWindow& a, const KernelWindow& b) {
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.process, b.process);
  EXPECT_EQ(a.kube, b.kube);
  EXPECT_EQ(a.start_unix_ns, b.start_unix_ns);
  EXPECT_EQ(a.end_unix_ns, b.end_unix_ns);
  EXPECT_EQ(a.window, b.window);
  EXPECT_EQ(a.busy_ns, b.busy_ns);
  EXPECT_EQ(a.idle_ns, b.idle_ns);
  ASSERT_EQ(a.top.size(), b.top.size());
  for (std::size_t i = 0; i < a.top.size(); ++i) {
    EXPECT_EQ(a.top[i].name, b.top[i].name);
    EXPECT_EQ(a.top[i].launches, b.top[i].launches);
    EXPECT_EQ(a.top[i].ns, b.top[i].ns);
  }
  EXPECT_EQ(a.other_kernels, b.other_kernels);
  EXPECT_EQ(a.other_launches, b.other_launches);
  EXPECT_EQ(a.other_ns, b.other_ns);
  EXPECT_EQ(a.collectives, b.collectives);
  EXPECT_EQ(a.copies, b.copies);
  EXPECT_EQ(a.memsets, b.memsets);
  EXPECT_EQ(a.cupti_dropped, b.cupti_dropped);
  EXPECT_EQ(a.summaries_dropped, b.summaries_dropped);
}

using gpulens::testing::wait_for;

store::WriterOptions fast_writer() {
  store::WriterOptions w;
  w.flush_interval_s = 0.02;
  return w;
}

TEST(KernelHistory, QueriesAnswerAcrossARestartWithEveryField) {
  store::StoreOptions o;
  o.path = gpulens::testing::scratch_dir("kernel-history") + "/history.db";
  const std::vector<KernelWindow> sent = {window(0, 100, 20), window(1, 200, 20),
                                          window(0, 100, 40)};
  {  // The agent before the restart: windows queued to its writer.
    store::StoreWriter writer(o, fast_writer(), [](bool, const std::string&) {});
    writer.start(TraceHeader{});
    for (const auto& w : sent) ASSERT_TRUE(writer.push_kernel_window(w));
    ASSERT_TRUE(wait_for([&] { return writer.status().kernel_windows_written == 3; }));
    writer.stop();
  }
  // After: new objects on the same file; a ring of 1 per GPU keeps the newest.
  for (const std::size_t ring : {std::size_t{100}, std::size_t{1}}) {
    KernelStore kernels(ring);
    KernelHistoryCounts counts;
    load_kernel_history(o, kernels, counts, {0, 1});
    EXPECT_TRUE(counts.enabled);
    EXPECT_EQ(counts.skipped, 0u);
    const auto r = kernels.query({0, 1e10, {}, {}, 100});
    if (ring == 1) {
      ASSERT_EQ(r.windows.size(), 2u);
      expect_same(r.windows[0], sent[1]);  // GPU 1's only window, then GPU 0's newest
      expect_same(r.windows[1], sent[2]);
      continue;
    }
    EXPECT_EQ(counts.loaded, 3u);
    ASSERT_EQ(r.windows.size(), 3u);
    expect_same(r.windows[0], sent[0]);
    expect_same(r.windows[1], sent[1]);
    expect_same(r.windows[2], sent[2]);
    // The per-GPU series are built from latest(): it sees the loaded windows too.
    EXPECT_EQ(kernels.latest(0).size(), 2u);
  }
}

TEST(KernelHistory, ACorruptRowIsSkippedAndCounted) {
  store::StoreOptions o;
  o.path = gpulens::testing::scratch_dir("kernel-history-corrupt") + "/history.db";
  {
    auto history = store::HistoryStore::open(o);
    ASSERT_TRUE(history.ok()) << history.error().message;
    ASSERT_TRUE(history->write({}, {}, {}, {window(0, 100, 20), window(0, 101, 20)}).ok());
    ASSERT_TRUE(history->db().exec("UPDATE kernel_windows SET top = x'01' WHERE pid = 101").ok());
  }
  KernelStore kernels;
  KernelHistoryCounts counts;
  load_kernel_history(o, kernels, counts, {0, 1});
  EXPECT_EQ(counts.skipped, 1u);
  EXPECT_EQ(counts.loaded, 1u);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels.query({0, 1e10, {}, {}, 10}).windows[0].pid, 100u);
}

TEST(KernelHistory, WithoutAHistoryFileNothingIsRead) {
  KernelStore kernels;
  KernelHistoryCounts counts;
  load_kernel_history(store::StoreOptions{}, kernels, counts, {0, 1});
  EXPECT_FALSE(counts.enabled);
  EXPECT_EQ(kernels.size(), 0u);
}

// Issue 47, 7: `written` counted every window handed to the history (771 said,
// 753 kept). It now counts the windows that added a row: not one the store
// skipped (its name past the bound), nor one that replaced a stored row.
TEST(KernelHistory, WrittenCountsOnlyTheWindowsKept) {
  store::StoreOptions o;
  o.path = gpulens::testing::scratch_dir("kernel-history-written") + "/history.db";
  store::StoreWriter writer(o, fast_writer(), [](bool, const std::string&) {});
  writer.start(TraceHeader{});
  KernelWindow oversized = window(0, 100, 60);
  oversized.top[0].name.assign(store::kMaxStoredKernelName + 1, 'n');
  for (const KernelWindow& w : {window(0, 100, 20), window(0, 100, 20), oversized,
                                window(0, 100, 40), window(1, 100, 40)}) {
    ASSERT_TRUE(writer.push_kernel_window(w));
  }
  ASSERT_TRUE(wait_for([&] { return writer.status().last_commit.has_value(); }));
  writer.stop();
  KernelStore after;
  KernelHistoryCounts counts;
  load_kernel_history(o, after, counts, {0, 1});
  EXPECT_EQ(after.size(), 3u);
  EXPECT_EQ(writer.status().kernel_windows_written, 3u);
}

// The receiver's intake queues each window it stores to the writer it was given.
TEST(KernelHistory, TheIntakeQueuesWhatItStores) {
  store::StoreOptions o;
  o.path = gpulens::testing::scratch_dir("kernel-history-intake") + "/history.db";
  store::StoreWriter writer(o, fast_writer(), [](bool, const std::string&) {});
  writer.start(TraceHeader{});
  KernelStore kernels;
  SummaryIntake intake(kernels, {}, nullptr, &writer);
  intake.set_clock([] { return static_cast<double>(kBase) / 1e9; });  // the window's time
  LiveSnapshot snap;
  snap.seq = 1;
  GpuLive g;
  Sample s;
  s.gpu = 0;
  ProcessSample p;
  p.pid = 100;
  p.name = "train";
  s.procs = std::vector<ProcessSample>{p};
  g.sample = s;
  snap.gpus.push_back(g);
  kernels::WindowSummary sum;
  sum.start_unix_ns = kBase;
  sum.end_unix_ns = kBase + 2'000'000'000;
  kernels::DeviceWork dev;
  dev.busy_ns = 1'000'000'000;
  dev.idle_ns = 1'000'000'000;
  dev.top.push_back(kernels::KernelTime{"gemm", 3, 900'000'000});
  sum.devices.push_back(dev);
  ASSERT_EQ(
      intake.take(kernels::encode_summary(sum), false, PeerCredentials{100, 1000, 1000}, snap, 0),
      Refusal::None);
  ASSERT_TRUE(wait_for([&] { return writer.status().kernel_windows_written == 1; }));
  writer.stop();
  KernelStore after;
  KernelHistoryCounts counts;
  load_kernel_history(o, after, counts, {0, 1});
  const auto r = after.query({0, 1e10, {}, {}, 10});
  ASSERT_EQ(r.windows.size(), 1u);
  expect_same(r.windows[0], kernels.query({0, 1e10, {}, {}, 10}).windows[0]);
}

}  // namespace
}  // namespace gpulens::agent

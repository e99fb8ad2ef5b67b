// SPDX-License-Identifier: Apache-2.0
#include "agent/kernel_store.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpulens::agent {
namespace {

KernelWindow store_window(int gpu, std::uint32_t pid, double start_s, std::size_t kernels = 1,
                          std::size_t name_bytes = 8) {
  KernelWindow w;
  w.gpu = gpu;
  w.pid = pid;
  w.process = "python3";
  w.start_unix_ns = static_cast<std::int64_t>(start_s * 1e9);
  w.end_unix_ns = w.start_unix_ns + 2'000'000'000;
  for (std::size_t k = 0; k < kernels; ++k) {
    std::string name = fmt::format("kernel_{}_", k);
    name.resize(std::max(name_bytes, name.size()), 'x');
    w.top.push_back(kernels::KernelTime{name, 10, 1000});
  }
  return w;
}

TEST(KernelStore, EachGpuKeepsItsNewestWindowsOnly) {
  KernelStore store(3);
  for (int i = 0; i < 5; ++i) store.add(store_window(0, 100, 1000 + 20 * i));
  store.add(store_window(1, 200, 1000));
  EXPECT_EQ(store.size(), 4u);
  const auto r = store.query({0, 1e10, {0}, {}, 100});
  ASSERT_EQ(r.windows.size(), 3u);
  EXPECT_EQ(r.windows.front().start_unix_ns, 1040'000'000'000);  // the two oldest went
  EXPECT_FALSE(r.truncated);
  // A busy GPU does not push out another GPU's windows.
  EXPECT_EQ(store.query({0, 1e10, {1}, {}, 100}).windows.size(), 1u);
}

TEST(KernelStore, QueriesByTimeGpuPidAndLimit) {
  KernelStore store;
  for (int i = 0; i < 10; ++i) {
    store.add(store_window(i % 2, 100 + static_cast<std::uint32_t>(i % 3), 1000 + 20 * i));
  }
  // Windows overlapping [1041, 1081]: those starting 1040, 1060, 1080.
  EXPECT_EQ(store.query({1041, 1081, {}, {}, 100}).windows.size(), 3u);
  for (const auto& w : store.query({0, 1e10, {1}, {}, 100}).windows) EXPECT_EQ(w.gpu, 1);
  for (const auto& w : store.query({0, 1e10, {}, {101}, 100}).windows) EXPECT_EQ(w.pid, 101u);
  const auto limited = store.query({0, 1e10, {}, {}, 4});
  ASSERT_EQ(limited.windows.size(), 4u);
  EXPECT_TRUE(limited.truncated);
  EXPECT_EQ(limited.windows.back().start_unix_ns, 1180'000'000'000);  // the newest kept
  EXPECT_LT(limited.windows.front().start_unix_ns, limited.windows.back().start_unix_ns);
  // The newest store_window per GPU and process (per-GPU series build on it).
  const auto latest = store.latest(1100);
  EXPECT_EQ(latest.size(), 5u);  // (gpu, pid) pairs with a store_window ending after 1100
  for (const auto& w : latest) EXPECT_GE(w.end_unix_ns, 1100'000'000'000);
}

// Issue 47, 5: one process sending fast refilled its GPU's whole ring and
// pushed out every other process's windows. The ring now makes room from the
// process that holds most of it.
TEST(KernelStore, AProcessSendingMoreCannotPushOthersOut) {
  KernelStore store(100);
  for (int i = 0; i < 30; ++i) store.add(store_window(0, 100, 1000 + 20 * i));  // a real job
  for (int i = 0; i < 1000; ++i) store.add(store_window(0, 666, 2000 + i));     // a flooder
  EXPECT_EQ(store.size(), 100u);
  EXPECT_EQ(store.query({0, 1e10, {}, {100}, 1000}).windows.size(), 30u);
  EXPECT_EQ(store.query({0, 1e10, {}, {666}, 1000}).windows.size(), 70u);
  // The flooder's own oldest went: its newest are kept.
  EXPECT_EQ(store.query({0, 1e10, {}, {666}, 1}).windows.at(0).start_unix_ns, 2999'000'000'000);
  // With equal shares, the ring makes room from the oldest window.
  KernelStore even(4);
  for (int i = 0; i < 6; ++i) even.add(store_window(0, 100 + i % 2, 1000 + 20 * i));
  const auto kept = even.query({0, 1e10, {}, {}, 10}).windows;
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept.front().start_unix_ns, 1040'000'000'000);
}

// Issue 47, 1: `?limit=10000` copied every window in range (with 256-byte names,
// 104 MB an answer) under the store's lock. An answer now holds at most the
// newest kMaxKernelAnswerBytes of windows, and says it was cut.
TEST(KernelStore, AnAnswerIsBoundedInBytesWhateverTheLimit) {
  KernelStore store;
  for (int i = 0; i < 2000; ++i) store.add(store_window(i % 8, 100, 1000 + 2.5 * i, 32, 256));
  const auto r = store.query({0, 1e10, {}, {}, 10000});
  EXPECT_TRUE(r.truncated);
  ASSERT_FALSE(r.windows.empty());
  EXPECT_LT(r.windows.size(), 2000u);
  std::size_t bytes = 0;
  for (const auto& w : r.windows) bytes += window_bytes(w);
  EXPECT_LE(bytes, kMaxKernelAnswerBytes);
  EXPECT_GT(bytes, kMaxKernelAnswerBytes / 2);
  EXPECT_EQ(r.windows.back().start_unix_ns, 1000'000'000'000 + 1999 * 2'500'000'000LL);  // newest
  for (std::size_t i = 1; i < r.windows.size(); ++i) {
    EXPECT_LT(r.windows[i - 1].start_unix_ns, r.windows[i].start_unix_ns);  // oldest first
  }
}

// The size of a GPU-day in memory, measured: at the defaults (a store_window every 20 s,
// one process per GPU) a day is kKernelWindowsPerGpu windows. Each holds the
// library's 10 kernels; demangled names of PyTorch and cutlass kernels run
// 60-250 bytes (a 120-byte mean here). docs/kernels-agent.md quotes the figure.
TEST(KernelStore, AGpuDayAtTheDefaultsIsAboutNineMegabytes) {
  KernelStore store;
  for (std::size_t i = 0; i < kKernelWindowsPerGpu + 100; ++i) {
    store.add(store_window(0, 100, 1000 + 20.0 * static_cast<double>(i), 10, 120));
  }
  EXPECT_EQ(store.size(), kKernelWindowsPerGpu);  // bounded
  const double mib = static_cast<double>(store.bytes()) / (1 << 20);
  RecordProperty("kernel_store_mib_per_gpu_day", fmt::format("{:.2f}", mib));
  std::printf("kernel store: %.2f MiB per GPU-day (%zu windows)\n", mib, store.size());
  EXPECT_GT(mib, 3.0);
  EXPECT_LT(mib, 12.0);  // 9.5 MiB when measured: names are not shared between windows
}

}  // namespace
}  // namespace gpulens::agent

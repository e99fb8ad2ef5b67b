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

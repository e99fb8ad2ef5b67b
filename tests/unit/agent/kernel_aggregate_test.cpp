// SPDX-License-Identifier: Apache-2.0
// The windows of a range summed per GPU and process (/api/v1/kernels/summary).
#include "agent/kernel_aggregate.hpp"

#include <gtest/gtest.h>

namespace gpulens::agent {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

KernelWindow window(int gpu, std::uint32_t pid, std::int64_t start_s,
                    std::vector<kernels::KernelTime> top) {
  KernelWindow w;
  w.gpu = gpu;
  w.pid = pid;
  w.uid = 1000;
  w.process = "python3";
  w.start_unix_ns = start_s * kS;
  w.end_unix_ns = w.start_unix_ns + 2 * kS;
  w.busy_ns = 1'500'000'000;
  w.idle_ns = 500'000'000;
  w.top = std::move(top);
  w.other_kernels = 3;
  w.other_launches = 7;
  w.other_ns = 100;
  w.collectives = {2, 0, 40};
  w.copies = {3, 4096, 11};
  w.memsets = {1, 64, 2};
  w.cupti_dropped = 1;
  w.summaries_dropped = 2;
  return w;
}

std::uint64_t kernel_ns(const KernelWindow& w) {
  std::uint64_t ns = w.other_ns;
  for (const auto& k : w.top) ns += k.ns;
  return ns;
}

TEST(KernelAggregate, TheSummaryIsTheSumOfTheWindows) {
  const std::vector<KernelWindow> windows = {
      window(0, 10, 1000, {{"gemm", 5, 1000}, {"softmax", 2, 300}}),
      window(0, 10, 1020, {{"softmax", 4, 900}, {"gemm", 1, 200}, {"layernorm", 8, 50}}),
      window(0, 10, 1040, {{"gemm", 3, 600}}),
  };
  KernelAggregator agg;
  std::uint64_t total = 0;
  for (const auto& w : windows) {
    agg.add(w);
    total += kernel_ns(w);
  }
  const auto out = agg.result();
  ASSERT_EQ(out.size(), 1u);
  const auto& s = out[0];
  EXPECT_EQ(s.gpu, 0);
  EXPECT_EQ(s.pid, 10u);
  EXPECT_EQ(s.windows, 3u);
  EXPECT_EQ(s.start_unix_ns, 1000 * kS);
  EXPECT_EQ(s.end_unix_ns, 1042 * kS);
  EXPECT_EQ(s.busy_ns, 3 * 1'500'000'000ULL);
  EXPECT_EQ(s.idle_ns, 3 * 500'000'000ULL);
  // Merged by name across windows, longest first.
  ASSERT_EQ(s.top.size(), 3u);
  EXPECT_EQ(s.top[0].name, "gemm");
  EXPECT_EQ(s.top[0].ns, 1800u);
  EXPECT_EQ(s.top[0].launches, 9u);
  EXPECT_EQ(s.top[1].name, "softmax");
  EXPECT_EQ(s.top[1].ns, 1200u);
  EXPECT_EQ(s.top[1].launches, 6u);
  EXPECT_EQ(s.top[2].name, "layernorm");
  EXPECT_EQ(s.other_ns, 300u);  // the windows' own remainders
  EXPECT_EQ(s.other_launches, 21u);
  EXPECT_EQ(s.other_named, 0u);
  EXPECT_EQ(s.kernel_ns, total);
  EXPECT_EQ(s.collectives, (kernels::WorkTotal{6, 0, 120}));
  EXPECT_EQ(s.copies, (kernels::WorkTotal{9, 3 * 4096, 33}));
  EXPECT_EQ(s.memsets, (kernels::WorkTotal{3, 3 * 64, 6}));
  EXPECT_EQ(s.cupti_dropped, 3u);
  EXPECT_EQ(s.summaries_dropped, 6u);
}

// Issue 47, 4: sums over a range wrapped at 2^64 (a counter went backwards).
TEST(KernelAggregate, SumsHoldAtTheLargestCountInsteadOfWrapping) {
  KernelAggregator agg;
  auto w = window(0, 10, 1000, {{"a", UINT64_MAX - 5, UINT64_MAX - 5}});
  w.copies.bytes = UINT64_MAX - 5;
  agg.add(w);
  agg.add(w);
  const auto out = agg.result();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kernel_ns, UINT64_MAX);
  ASSERT_EQ(out[0].top.size(), 1u);
  EXPECT_EQ(out[0].top[0].ns, UINT64_MAX);
  EXPECT_EQ(out[0].top[0].launches, UINT64_MAX);
  EXPECT_EQ(out[0].copies.bytes, UINT64_MAX);
}

TEST(KernelAggregate, KernelsPastTheTopJoinOther) {
  KernelAggregator agg(2);
  agg.add(window(0, 10, 1000, {{"a", 1, 500}, {"b", 1, 400}, {"c", 1, 300}}));
  agg.add(window(0, 10, 1020, {{"d", 2, 250}, {"c", 1, 300}, {"e", 4, 10}}));
  const auto out = agg.result();
  ASSERT_EQ(out.size(), 1u);
  const auto& s = out[0];
  ASSERT_EQ(s.top.size(), 2u);
  EXPECT_EQ(s.top[0].name, "c");  // 600 over two windows beats a's 500 in one
  EXPECT_EQ(s.top[0].ns, 600u);
  EXPECT_EQ(s.top[1].name, "a");
  // b, d and e folded in beside the two windows' own other (100 ns, 7 launches each).
  EXPECT_EQ(s.other_named, 3u);
  EXPECT_EQ(s.other_ns, 400u + 250u + 10u + 200u);
  EXPECT_EQ(s.other_launches, 1u + 2u + 4u + 14u);
  EXPECT_EQ(s.kernel_ns, 600u + 500u + s.other_ns);
}

TEST(KernelAggregate, TheNewestWindowNamesTheProcessAndItsPod) {
  KernelWindow newest = window(1, 10, 1040, {});
  newest.process = "torchrun";
  newest.kube = {"ml", "trainer-1", "main"};
  KernelWindow older = window(1, 10, 1000, {});
  older.process = "python3";
  older.kube = {"ml", "trainer-0", "main"};
  KernelAggregator agg;
  agg.add(newest);  // arrival order is not time order
  agg.add(older);
  const auto out = agg.result();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].process, "torchrun");
  EXPECT_EQ(out[0].kube.pod, "trainer-1");
  EXPECT_EQ(out[0].start_unix_ns, 1000 * kS);
  EXPECT_EQ(out[0].end_unix_ns, 1042 * kS);
}

TEST(KernelAggregate, OneSummaryPerGpuAndProcessByGpuThenKernelTime) {
  KernelAggregator agg;
  agg.add(window(1, 10, 1000, {{"x", 1, 10}}));
  agg.add(window(0, 10, 1000, {{"x", 1, 10}}));
  agg.add(window(0, 20, 1000, {{"x", 1, 5000}}));
  const auto out = agg.result();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].gpu, 0);
  EXPECT_EQ(out[0].pid, 20u);  // the most kernel time on GPU 0 first
  EXPECT_EQ(out[1].gpu, 0);
  EXPECT_EQ(out[1].pid, 10u);
  EXPECT_EQ(out[2].gpu, 1);
}

TEST(KernelAggregate, TheStoreIsSummedByRangeGpuAndPidWithoutItsLimit) {
  KernelStore store(10000);
  for (int i = 0; i < 3000; ++i) {
    store.add(window(i % 2, 10 + static_cast<std::uint32_t>(i % 3), 1000 + 20 * (i / 6),
                     {{"gemm", 1, 100}}));
  }
  KernelQuery all{0, 1e10, {}, {}, 1};  // summary ignores the limit
  std::size_t windows = 0;
  for (const auto& s : total_kernels_by_process(store, all)) windows += s.windows;
  EXPECT_EQ(windows, 3000u);
  KernelQuery one{0, 1e10, {1}, {11}, 1000};
  const auto only = total_kernels_by_process(store, one);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0].gpu, 1);
  EXPECT_EQ(only[0].pid, 11u);
  EXPECT_EQ(only[0].windows, 500u);  // i = 1, 7, 13, ...
  EXPECT_EQ(only[0].top.at(0).ns, 500u * 100u);
  // Windows overlapping [1041, 1061]: the batches that start at 1040 and 1060.
  KernelQuery range{1041, 1061, {}, {}, 1000};
  windows = 0;
  for (const auto& s : total_kernels_by_process(store, range)) windows += s.windows;
  EXPECT_EQ(windows, 12u);
  EXPECT_TRUE(total_kernels_by_process(store, {0, 1e10, {}, {99}, 1000}).empty());
}

}  // namespace
}  // namespace gpulens::agent

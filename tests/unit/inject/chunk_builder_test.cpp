// SPDX-License-Identifier: Apache-2.0
// What the injection library keeps of the job's GPU activity between chunks
// (src/inject/chunk_builder.cpp), fed as CUPTI's records would be, without a GPU.
#include "inject/chunk_builder.hpp"

#include <gtest/gtest.h>

#include <string>

#include "kernel_lines.hpp"

namespace gpulens::inject {
namespace {

KernelLaunch collector_launch(const std::string& name, std::uint32_t blocks,
                              std::uint32_t device = 0) {
  KernelLaunch k;
  k.name = name;
  k.config.device = device;
  k.config.grid[0] = blocks, k.config.grid[1] = 1, k.config.grid[2] = 1;
  k.config.block[0] = 256, k.config.block[1] = 1, k.config.block[2] = 1;
  k.config.registers = 32;
  k.config.dynamic_smem = 1024;
  return k;
}

TEST(ChunkBuilder, EachConfigurationAndNameIsNamedOnceInTheRecordsTerms) {
  ChunkBuilder c(1000);
  c.kernel(collector_launch("gemm", 132), 2000, 3000, 7);
  c.kernel(collector_launch("gemm", 132), 4000, 4500, 7);
  c.kernel(collector_launch("gemm", 264), 5000, 5400, 7);
  Drained first = c.drain();
  ASSERT_EQ(first.names.kernel_names.size(), 1u);
  EXPECT_EQ(first.names.kernel_names[0].second, "gemm");
  ASSERT_EQ(first.names.configs.size(), 2u);
  const kernels::ConfigEntry& a = first.names.configs[0];
  EXPECT_EQ(a.id, 0u);
  EXPECT_EQ(a.name, first.names.kernel_names[0].first);
  EXPECT_EQ(a.grid[0], 132u);
  EXPECT_EQ(a.block[0], 256u);
  EXPECT_EQ(a.registers, 32u);
  EXPECT_EQ(a.dynamic_smem, 1024u);
  EXPECT_EQ(first.names.configs[1].id, 1u);
  EXPECT_EQ(first.names.configs[1].grid[0], 264u);
  ASSERT_EQ(first.chunk.kernels.size(), 2u);
  EXPECT_EQ(first.chunk.kernels[0].count, 2u);
  EXPECT_EQ(first.chunk.kernels[0].total_ns, 1500u);
  EXPECT_EQ(first.chunk.kernels[0].min_ns, 500u);
  EXPECT_EQ(first.chunk.kernels[0].max_ns, 1000u);

  // The next chunk uses the same ids and names nothing again.
  c.kernel(collector_launch("gemm", 264), 6000, 6100, 7);
  Drained second = c.drain();
  EXPECT_TRUE(second.names.empty());
  ASSERT_EQ(second.chunk.kernels.size(), 1u);
  EXPECT_EQ(second.chunk.kernels[0].config, 1u);
  EXPECT_EQ(second.chunk.kernels[0].count, 1u);
}

TEST(ChunkBuilder, TheSameKernelOnAnotherDeviceIsAnotherConfiguration) {
  ChunkBuilder c(0);
  c.kernel(collector_launch("gemm", 132, 0), 0, 10, 7);
  c.kernel(collector_launch("gemm", 132, 1), 0, 10, 7);
  const Drained d = c.drain();
  EXPECT_EQ(d.names.kernel_names.size(), 1u);
  ASSERT_EQ(d.names.configs.size(), 2u);
  EXPECT_EQ(d.names.configs[1].device, 1u);
  ASSERT_EQ(d.chunk.busy.size(), 2u);  // each device's busy time apart
}

TEST(ChunkBuilder, PastTheCapConfigurationsFoldIntoOnePerNameAndDevice) {
  ChunkBuilder c(0);
  for (std::uint32_t i = 0; i < kMaxLaunchConfigs; ++i)
    c.kernel(collector_launch("k", i + 1), 0, 1, 7);
  EXPECT_EQ(c.drain().chunk.configs_folded, 0u);
  c.kernel(collector_launch("k", kMaxLaunchConfigs + 1), 0, 1, 7);
  c.kernel(collector_launch("k", kMaxLaunchConfigs + 2), 0, 1, 7);
  const Drained d = c.drain();
  EXPECT_EQ(d.chunk.configs_folded, 2u);
  ASSERT_EQ(d.names.configs.size(), 1u);  // the folded configuration, named once
  EXPECT_EQ(d.names.configs[0].id, kMaxLaunchConfigs);
  EXPECT_EQ(d.names.configs[0].grid[0], 0u);
  ASSERT_EQ(d.chunk.kernels.size(), 1u);
  EXPECT_EQ(d.chunk.kernels[0].count, 2u);
}

TEST(ChunkBuilder, ADeviceIsNamedAtItsFirstSightOnly) {
  ChunkBuilder c(0);
  kernels::DeviceEntry gpu;
  gpu.id = 3;
  gpu.name = "NVIDIA H200";
  gpu.sms = 132;
  c.device(gpu);
  gpu.sms = 1;
  c.device(gpu);
  const Drained d = c.drain();
  ASSERT_EQ(d.names.devices.size(), 1u);
  EXPECT_EQ(d.names.devices[0].id, 3u);
  EXPECT_EQ(d.names.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(d.names.devices[0].sms, 132u);
  c.device(gpu);
  EXPECT_TRUE(c.drain().names.empty());
}

TEST(ChunkBuilder, CopiesAndMemsetsAddUpAndCountAsBusyTime) {
  ChunkBuilder c(100);
  const CopyKey htod{0, "HtoD", "pinned", "device"};
  c.copy(htod, 4096, 200, 300, 7);
  c.copy(htod, 4096, 400, 450, 7);
  c.memset(0, 512, 500, 520, 8);
  c.copy(htod, 1, 900, 800, 7);  // ends before it starts: not kept
  const Drained d = c.drain();
  ASSERT_EQ(d.chunk.copies.size(), 1u);
  EXPECT_EQ(d.chunk.copies[0].kind, "HtoD");
  EXPECT_EQ(d.chunk.copies[0].count, 2u);
  EXPECT_EQ(d.chunk.copies[0].bytes, 8192u);
  EXPECT_EQ(d.chunk.copies[0].total_ns, 150u);
  ASSERT_EQ(d.chunk.memsets.size(), 1u);
  EXPECT_EQ(d.chunk.memsets[0].bytes, 512u);
  ASSERT_EQ(d.chunk.streams.size(), 2u);
  EXPECT_EQ(d.chunk.streams[0].launches, 2u);
  ASSERT_EQ(d.chunk.busy.size(), 1u);
  ASSERT_FALSE(d.chunk.busy[0].spans.empty());
  EXPECT_EQ(d.chunk.busy[0].spans.front().start, 100);  // relative to the base
  EXPECT_EQ(d.chunk.busy[0].spans.back().end, 420);
}

TEST(ChunkBuilder, RangesPairStartsWithEndsAndCountTheRest) {
  ChunkBuilder c(0);
  c.range_start(1, 1000, "step", "");
  c.range_end(1, 3000);
  c.range_end(2, 3500);  // never started
  c.range_start(3, 4000, "fwd", "torch");
  c.range_start(4, 5000, "bwd", "");
  c.range_end(4, 4500);  // ends before it starts
  const Drained d = c.drain();
  ASSERT_EQ(d.names.range_names.size(), 3u);
  EXPECT_EQ(d.names.range_names[1].domain, "torch");
  ASSERT_EQ(d.chunk.ranges.size(), 1u);
  EXPECT_EQ(d.chunk.ranges[0].count, 1u);
  EXPECT_EQ(d.chunk.ranges[0].total_ns, 2000u);
  ASSERT_EQ(d.chunk.instances.size(), 1u);
  EXPECT_EQ(d.chunk.instances[0].start, 1000);
  EXPECT_EQ(c.unmatched_ranges(), 3u);  // 2 and 4 unmatched, 3 still open
}

TEST(ChunkBuilder, CollectivesKeepTheirInstancesAndOtherKernelsDoNot) {
  ChunkBuilder c(0);
  c.kernel(collector_launch("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 24), 500, 900, 9);
  c.kernel(collector_launch("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 24), 100, 300, 9);
  c.kernel(collector_launch("gemm", 132), 0, 1000, 7);
  const Drained d = c.drain();
  ASSERT_EQ(d.chunk.collectives.size(), 1u);
  ASSERT_EQ(d.chunk.collectives[0].instances.size(), 2u);
  EXPECT_EQ(d.chunk.collectives[0].instances[0].first, 100);  // sorted by start
}

TEST(ChunkBuilder, DurationsLandInLogBucketsOfEightPerPowerOfTwo) {
  EXPECT_EQ(duration_bucket(0), 0);
  EXPECT_EQ(duration_bucket(1), 1);
  EXPECT_EQ(duration_bucket(2), 9);
  EXPECT_EQ(duration_bucket(1024), 81);
  for (std::uint64_t ns : {3ull, 100ull, 4321ull, 1000000ull}) {
    const int b = duration_bucket(ns);
    EXPECT_LE(bucket_low_ns(b), ns) << ns;
    EXPECT_GT(bucket_low_ns(b + 1), ns) << ns;
  }
}

TEST(ChunkBuilder, DroppedRecordsAndSyncsAreCountedPerChunk) {
  ChunkBuilder c(0);
  c.dropped(5);
  c.sync(1, 10, 20);
  c.sync(1, 30, 25);  // ends before it starts: not kept
  Drained d = c.drain();
  EXPECT_EQ(d.chunk.dropped, 5u);
  ASSERT_EQ(d.chunk.syncs.size(), 1u);
  EXPECT_EQ(d.chunk.syncs[0].end, 20);
  EXPECT_EQ(c.drain().chunk.dropped, 0u);
}

TEST(ChunkBuilder, AggregatesLaunchesAndMergesBusyIntervals) {
  ChunkBuilder c(100);
  c.kernel(gpulens::testing::key("k", 1, 32), 100, 200, 1);
  c.kernel(gpulens::testing::key("k", 1, 32), 150, 400, 2);  // overlaps on another stream
  c.kernel(gpulens::testing::key("k", 2, 32), 1000, 1100, 1);
  c.memset(0, 64, 1100, 1200, 1);  // touches the kernel before it
  c.sync(3, 500, 900);
  const Drained d = c.drain();
  ASSERT_EQ(d.chunk.busy.size(), 1u);
  const auto& merged = d.chunk.busy[0].spans;
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].start, 0);
  EXPECT_EQ(merged[0].end, 300);
  EXPECT_EQ(merged[0].parts, 2u);  // two kernels, overlapping
  EXPECT_EQ(merged[1].start, 900);
  EXPECT_EQ(merged[1].end, 1100);
  ASSERT_EQ(d.chunk.kernels.size(), 2u);  // two launch configurations
  ASSERT_EQ(d.names.configs.size(), 2u);
  ASSERT_EQ(d.names.kernel_names.size(), 1u);  // of one name
  EXPECT_EQ(d.chunk.kernels[0].count, 2u);
  EXPECT_EQ(d.chunk.kernels[0].total_ns, 350u);
  ASSERT_EQ(d.chunk.syncs.size(), 1u);
  EXPECT_EQ(d.chunk.syncs[0].start, 400);
  EXPECT_EQ(d.chunk.syncs[0].end, 800);
  EXPECT_EQ(d.chunk.memsets[0].bytes, 64u);
  // The next chunk starts empty and names only what is new.
  c.kernel(gpulens::testing::key("k", 1, 32), 2000, 2100, 1);
  c.kernel(gpulens::testing::key("k2", 1, 32), 2200, 2300, 1);
  const Drained next = c.drain();
  EXPECT_EQ(next.chunk.kernels.size(), 2u);
  ASSERT_EQ(next.names.configs.size(), 1u);
  EXPECT_EQ(next.names.kernel_names.size(), 1u);
  EXPECT_EQ(next.names.kernel_names[0].second, "k2");
  EXPECT_TRUE(next.chunk.syncs.empty());
}

TEST(ChunkBuilder, DurationBucketsAreOrderedAndTight) {
  int last = -1;
  for (std::uint64_t ns : {1ull, 2ull, 10ull, 1000ull, 1001ull, 123456ull, 10000000000ull}) {
    const int b = duration_bucket(ns);
    EXPECT_GE(b, last);
    last = b;
    EXPECT_LE(bucket_low_ns(b), ns);
    EXPECT_GT(static_cast<double>(bucket_low_ns(b)) * 1.1, static_cast<double>(ns));
  }
}

}  // namespace
}  // namespace gpulens::inject

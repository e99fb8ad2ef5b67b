// SPDX-License-Identifier: Apache-2.0
// CUPTI's activity records into the injection library's collector
// (src/inject/records.cpp): record structs as CUPTI lays them out, handed over
// by a stand-in for CUPTI's buffer iteration, without a GPU.
#ifdef GPULENS_INJECTION_SEAMS
#include "inject/records.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gpulens::inject {
namespace {

// A CUPTI buffer as the stand-in's record iterator walks it.
struct RecordsBuffer {
  std::vector<const CUpti_Activity*> records;
  std::size_t next = 0;
};

CUptiResult CUPTIAPI records_next(uint8_t* buffer, size_t, CUpti_Activity** rec) {
  auto* b = reinterpret_cast<RecordsBuffer*>(buffer);
  if (b->next >= b->records.size()) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *rec = const_cast<CUpti_Activity*>(b->records[b->next++]);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI records_dropped(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 3;
  return CUPTI_SUCCESS;
}

Api records_api() {
  Api api;
  api.next_record = records_next;
  api.dropped = records_dropped;
  return api;
}

void deliver(Records& r, std::vector<const CUpti_Activity*> records) {
  RecordsBuffer b{std::move(records), 0};
  r.take(records_api(), nullptr, 7, reinterpret_cast<std::uint8_t*>(&b), 0);
}

template <typename T>
const CUpti_Activity* as_record(const T& t) {
  return reinterpret_cast<const CUpti_Activity*>(&t);
}

CUpti_ActivityKernel10 gemm_record(std::uint64_t start, std::uint64_t end) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "_Z4gemmPKfPf";
  k.deviceId = 1;
  k.streamId = 7;
  k.gridX = 132, k.gridY = 1, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 2048;
  k.dynamicSharedMemory = -1;  // as a broken record might say: read as 0
  k.start = start, k.end = end;
  return k;
}

TEST(Records, NothingIsKeptBeforeTheFirstAttach) {
  Records r;
  const auto k = gemm_record(2000, 3000);
  deliver(r, {as_record(k)});
  EXPECT_FALSE(r.started());
  EXPECT_FALSE(r.drain().has_value());
  EXPECT_FALSE(r.activity().has_value());
}

TEST(Records, AKernelRecordBecomesADemangledNameAndAConfiguration) {
  Records r;
  r.start(1000, 5'000'000'000);
  EXPECT_EQ(r.clock().base_ns, 1000u);
  EXPECT_EQ(r.clock().base_unix_ns, 5'000'000'000);
  const auto a = gemm_record(2000, 3000);
  const auto b = gemm_record(3500, 4000);
  deliver(r, {as_record(a), as_record(b)});
  const auto d = r.drain();
  ASSERT_TRUE(d.has_value());
  ASSERT_EQ(d->names.kernel_names.size(), 1u);
  EXPECT_EQ(d->names.kernel_names[0].second, "gemm(float const*, float*)");
  ASSERT_EQ(d->names.configs.size(), 1u);
  const kernels::ConfigEntry& c = d->names.configs[0];
  EXPECT_EQ(c.device, 1u);
  EXPECT_EQ(c.grid[0], 132u);
  EXPECT_EQ(c.block[0], 256u);
  EXPECT_EQ(c.registers, 40u);
  EXPECT_EQ(c.static_smem, 2048u);
  EXPECT_EQ(c.dynamic_smem, 0u);
  ASSERT_EQ(d->chunk.kernels.size(), 1u);
  EXPECT_EQ(d->chunk.kernels[0].count, 2u);
  EXPECT_EQ(d->chunk.dropped, 3u);  // CUPTI's count for the buffer
  const auto activity = r.activity();
  ASSERT_TRUE(activity.has_value());
  EXPECT_EQ(activity->first, 1000);  // relative to the first attach
  EXPECT_EQ(activity->second, 3000);
}

TEST(Records, CopiesDevicesAndRangesAreReadInTheRecordsTerms) {
  Records r;
  r.start(0, 1);
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 1 << 20;
  copy.start = 100, copy.end = 200;
  CUpti_ActivityDevice5 gpu{};
  gpu.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  gpu.id = 0;
  gpu.name = "NVIDIA H200";
  gpu.numMultiprocessors = 132;
  gpu.maxWarpsPerMultiprocessor = 64;
  gpu.numThreadsPerWarp = 32;
  gpu.computeCapabilityMajor = 9;
  CUpti_ActivityMarker2 open{};
  open.kind = CUPTI_ACTIVITY_KIND_MARKER;
  open.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  open.id = 5, open.timestamp = 150, open.name = "step", open.domain = nullptr;
  CUpti_ActivityMarker2 close = open;
  close.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  close.name = nullptr, close.timestamp = 450;
  CUpti_ActivityMarker2 mark = open;
  mark.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;  // no length: not kept
  mark.id = 6;
  deliver(r, {as_record(copy), as_record(gpu), as_record(open), as_record(mark), as_record(close)});
  const auto d = r.drain();
  ASSERT_TRUE(d.has_value());
  ASSERT_EQ(d->chunk.copies.size(), 1u);
  EXPECT_EQ(d->chunk.copies[0].kind, "HtoD");
  EXPECT_EQ(d->chunk.copies[0].src, "pinned");
  EXPECT_EQ(d->chunk.copies[0].dst, "device");
  EXPECT_EQ(d->chunk.copies[0].bytes, 1u << 20);
  ASSERT_EQ(d->names.devices.size(), 1u);
  EXPECT_EQ(d->names.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(d->names.devices[0].max_threads_per_sm, 2048u);
  EXPECT_EQ(d->names.devices[0].cc_major, 9u);
  ASSERT_EQ(d->names.range_names.size(), 1u);
  EXPECT_EQ(d->names.range_names[0].name, "step");
  ASSERT_EQ(d->chunk.ranges.size(), 1u);
  EXPECT_EQ(d->chunk.ranges[0].total_ns, 300u);
  EXPECT_EQ(r.unmatched_ranges(), 0u);
  EXPECT_EQ(r.activity()->second, 200);  // copies count as activity, ranges do not
}

}  // namespace
}  // namespace gpulens::inject
#endif

// SPDX-License-Identifier: Apache-2.0
#include "inject/records.hpp"

#include <cstdlib>

#include "inject/injection.hpp"

namespace gpulens::inject {
namespace {

constexpr std::size_t kBufferBytes = 8u << 20;

const char* copy_kind(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "unknown";
  }
}

const char* memory_kind(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "device_static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "managed_static";
    default:
      return "unknown";
  }
}

// CUPTI gives launch sizes as signed numbers; the record's are unsigned.
std::uint32_t size_of(std::int32_t n) {
  return static_cast<std::uint32_t>(n < 0 ? 0 : n);
}

}  // namespace

void Records::set_unix_base(std::int64_t unix_ns) {
  std::lock_guard lock(mutex_);
  clock_.base_unix_ns = unix_ns;
}

void Records::start(std::uint64_t base_ns, std::int64_t base_unix_ns) {
  std::lock_guard lock(mutex_);
  if (builder_ != nullptr) return;
  clock_ = RecordClock{base_ns, base_unix_ns};
  builder_ = std::make_unique<ChunkBuilder>(base_ns);
}

bool Records::started() const {
  std::lock_guard lock(mutex_);
  return builder_ != nullptr;
}

RecordClock Records::clock() const {
  std::lock_guard lock(mutex_);
  return clock_;
}

void Records::seen(std::uint64_t start, std::uint64_t end) {
  if (start < first_ns_) first_ns_ = start;
  if (end > last_ns_) last_ns_ = end;
}

// Record structs are read only up to fields that every CUPTI version since
// CUDA 11 lays out the same way.
void Records::take_one(const CUpti_Activity* rec) {
  ChunkBuilder& c = *builder_;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      KernelLaunch launch;
      launch.name = names_(k->name);
      kernels::ConfigEntry& e = launch.config;
      e.device = k->deviceId;
      e.grid[0] = size_of(k->gridX), e.grid[1] = size_of(k->gridY), e.grid[2] = size_of(k->gridZ);
      e.block[0] = size_of(k->blockX), e.block[1] = size_of(k->blockY);
      e.block[2] = size_of(k->blockZ);
      e.registers = k->registersPerThread;
      e.static_smem = size_of(k->staticSharedMemory);
      e.dynamic_smem = size_of(k->dynamicSharedMemory);
      c.kernel(launch, k->start, k->end, k->streamId);
      seen(k->start, k->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      CopyKey key{m->deviceId, copy_kind(m->copyKind), memory_kind(m->srcKind),
                  memory_kind(m->dstKind)};
      c.copy(key, m->bytes, m->start, m->end, m->streamId);
      seen(m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      c.memset(m->deviceId, m->bytes, m->start, m->end, m->streamId);
      seen(m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* y = reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec);
      c.sync(static_cast<int>(y->type), y->start, y->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(rec);
      // Instantaneous markers (nvtxMark) have no length: they are not kept.
      if ((m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0) {
        c.range_start(m->id, m->timestamp, m->name != nullptr ? m->name : "(unnamed)",
                      m->domain != nullptr ? m->domain : "");
      } else if ((m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0) {
        c.range_end(m->id, m->timestamp);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(rec);
      kernels::DeviceEntry info;
      info.id = d->id;
      info.name = d->name != nullptr ? d->name : "";
      info.sms = d->numMultiprocessors;
      info.max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
      info.max_warps_per_sm = d->maxWarpsPerMultiprocessor;
      info.max_threads_per_sm = d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
      info.registers_per_sm = d->maxRegistersPerMultiprocessor;
      info.shared_per_sm = d->maxSharedMemoryPerMultiprocessor;
      info.cc_major = d->computeCapabilityMajor;
      info.cc_minor = d->computeCapabilityMinor;
      c.device(info);
      break;
    }
    default:
      break;
  }
}

void Records::take(const Api& api, CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                   std::size_t valid) {
  std::lock_guard lock(mutex_);
  if (builder_ == nullptr) return;
  CUpti_Activity* rec = nullptr;
  while (api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) take_one(rec);
  size_t dropped = 0;
  if (api.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS) builder_->dropped(dropped);
}

std::optional<Drained> Records::drain() {
  std::lock_guard lock(mutex_);
  if (builder_ == nullptr) return std::nullopt;
  return builder_->drain();
}

std::optional<std::pair<std::int64_t, std::int64_t>> Records::activity() const {
  std::lock_guard lock(mutex_);
  if (first_ns_ > last_ns_) return std::nullopt;
  return std::make_pair(static_cast<std::int64_t>(first_ns_ - clock_.base_ns),
                        static_cast<std::int64_t>(last_ns_ - clock_.base_ns));
}

std::uint64_t Records::unmatched_ranges() const {
  std::lock_guard lock(mutex_);
  return builder_ != nullptr ? builder_->unmatched_ranges() : 0;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid) {
  Injection& in = injection();
  in.records.take(in.cupti.api(), ctx, stream, buffer, valid);
  std::free(buffer);
}

}  // namespace gpulens::inject

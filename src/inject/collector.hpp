// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the injection library keeps of the job's GPU activity, in the job's own
// process: per kernel launch configuration a count and a duration histogram, per
// copy kind totals, the synchronisations, and per device the union of busy
// intervals (kernels, copies, memsets on any stream), and the job's NVTX ranges
// (per name totals and the most recent instances). Pure C++: no CUPTI here, so
// the aggregation is tested without a GPU.
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace gpulens::inject {

// Durations land in log buckets, 8 per power of two (9 % wide): percentiles to
// within a few per cent at a fixed few hundred bytes per kernel, however long the job.
int duration_bucket(std::uint64_t ns);
std::uint64_t bucket_low_ns(int bucket);

struct KernelKey {
  std::uint32_t device = 0;
  std::string name;
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::uint32_t registers = 0;
  std::int32_t static_smem = 0;
  std::int32_t dynamic_smem = 0;
  bool operator<(const KernelKey& o) const;
};

struct KernelStats {
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t min_ns = UINT64_MAX;
  std::uint64_t max_ns = 0;
  std::map<int, std::uint64_t> buckets;
};

struct CopyKey {
  std::uint32_t device = 0;
  std::string kind;  // HtoD, DtoH, DtoD, ...
  std::string src;   // pageable, pinned, device, managed, ...
  std::string dst;
  bool operator<(const CopyKey& o) const {
    return std::tie(device, kind, src, dst) < std::tie(o.device, o.kind, o.src, o.dst);
  }
};

struct CopyStats {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t total_ns = 0;
};

struct DeviceInfo {
  std::uint32_t id = 0;
  std::string name;
  std::uint32_t sms = 0;
  std::uint32_t max_blocks_per_sm = 0;
  std::uint32_t max_threads_per_sm = 0;
  std::uint32_t max_warps_per_sm = 0;
  std::uint32_t registers_per_sm = 0;
  std::uint32_t shared_per_sm = 0;
  std::uint32_t cc_major = 0;
  std::uint32_t cc_minor = 0;
};

// An NVTX range is named within its domain (empty: NVTX's default domain).
struct RangeKey {
  std::string domain;
  std::string name;
  bool operator<(const RangeKey& o) const {
    return std::tie(domain, name) < std::tie(o.domain, o.name);
  }
};

struct RangeStats {
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t min_ns = UINT64_MAX;
  std::uint64_t max_ns = 0;
};

// Bounds on what NVTX ranges may cost in the job's memory and in the record: a
// job naming each range differently ("step 1234") must not grow without end.
inline constexpr std::size_t kMaxRangeNameChars = 1000;
inline constexpr std::size_t kMaxRangeNames = 1000;       // then folded into "(other ranges)"
inline constexpr std::size_t kMaxRangeInstances = 20000;  // the most recent ones are kept
inline constexpr std::size_t kMaxOpenRanges = 100000;     // started, not yet ended
inline constexpr const char* kOtherRanges = "(other ranges)";

class Collector {
 public:
  // Times are CUPTI timestamps (ns); `base_ns` is the one taken at start, all
  // times are written relative to it.
  explicit Collector(std::uint64_t base_ns) : base_ns_(base_ns) {}

  void kernel(const KernelKey& key, std::uint64_t start, std::uint64_t end, std::uint32_t stream);
  void copy(const CopyKey& key, std::uint64_t bytes, std::uint64_t start, std::uint64_t end,
            std::uint32_t stream);
  void memset(std::uint32_t device, std::uint64_t bytes, std::uint64_t start, std::uint64_t end,
              std::uint32_t stream);
  void sync(int type, std::uint64_t start, std::uint64_t end);
  void device(const DeviceInfo& info) { devices_[info.id] = info; }
  // NVTX ranges as CUPTI's marker records give them: a start with the name, an
  // end with the same id. Push/pop and start/end ranges look alike there.
  void range_start(std::uint32_t id, std::uint64_t ts, std::string_view name,
                   std::string_view domain);
  void range_end(std::uint32_t id, std::uint64_t ts);
  void dropped(std::uint64_t n) { dropped_ += n; }

  // The record's activity part (kernels, copies, memsets, syncs, busy intervals,
  // devices, "nvtx" without its status); the caller adds the process and status
  // fields.
  nlohmann::json to_json();

  // Busy intervals of one device merged (sorted, overlaps joined), relative ns.
  std::vector<std::pair<std::int64_t, std::int64_t>> merged_busy(std::uint32_t device);

 private:
  void busy(std::uint32_t device, std::uint32_t stream, std::uint64_t start, std::uint64_t end);

  std::uint64_t base_ns_;
  std::map<KernelKey, KernelStats> kernels_;
  std::map<CopyKey, CopyStats> copies_;
  std::map<std::uint32_t, CopyStats> memsets_;
  std::vector<std::tuple<std::int64_t, std::int64_t, int>> syncs_;
  std::map<std::uint32_t, std::vector<std::pair<std::int64_t, std::int64_t>>> busy_;
  std::map<std::uint32_t, std::size_t> compact_at_;  // merge a device's list when it is this long
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::uint64_t, std::uint64_t>>
      streams_;  // (device, stream) -> (launches, busy ns)
  std::map<std::uint32_t, DeviceInfo> devices_;
  std::uint64_t dropped_ = 0;
  std::uint64_t kernel_keys_overflow_ = 0;

  struct OpenRange {
    std::uint64_t start = 0;
    std::size_t key = 0;
  };
  struct RangeInstance {
    std::int64_t start = 0, end = 0;
    std::size_t key = 0;
  };
  std::size_t range_key(std::string_view name, std::string_view domain);
  std::map<RangeKey, std::size_t> range_index_;
  std::vector<std::pair<RangeKey, RangeStats>> ranges_;  // by index
  std::unordered_map<std::uint32_t, OpenRange> open_ranges_;
  std::deque<RangeInstance> range_instances_;  // the most recent, by end
  std::uint64_t range_instances_dropped_ = 0;  // older instances let go
  std::uint64_t range_names_folded_ = 0;       // instances of names past kMaxRangeNames
  std::uint64_t ranges_unmatched_ = 0;         // ends without a start, starts past the cap
};

}  // namespace gpulens::inject

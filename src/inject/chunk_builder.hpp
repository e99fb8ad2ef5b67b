// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the injection library keeps of the job's GPU activity, in the job's own
// process, chunk by chunk (kernels/record/chunk_record.hpp): per kernel launch
// configuration a count and a duration histogram, per copy kind totals, the
// synchronisations, per device the union of busy intervals (kernels, copies,
// memsets on any stream) and the first collective kernel instances of the chunk
// (kernels::kMaxChunkCollectives), and the job's NVTX ranges (per name totals
// and the most recent instances). Pure C++: no CUPTI here, so the aggregation is tested
// without a GPU.
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kernels/record/chunk_record.hpp"

namespace gpulens::inject {

// Durations land in log buckets, 8 per power of two (9 % wide): percentiles to
// within a few per cent at a fixed few hundred bytes per kernel, however long the job.
int duration_bucket(std::uint64_t ns);
std::uint64_t bucket_low_ns(int bucket);

// Launch configurations kept apart; past it a new one is folded into one per
// kernel name and device (the chunk's `configs_folded` counts its launches).
inline constexpr std::size_t kMaxLaunchConfigs = 50000;

// One kernel launch as CUPTI reports it: the demangled name, and the launch
// configuration in the record's own terms (kernels::ConfigEntry), so the record's
// type is the one definition of a configuration. Its `id` and `name` are the
// builder's to assign (ids in the record's names lines); the caller leaves them.
struct KernelLaunch {
  std::string name;
  kernels::ConfigEntry config;
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
inline constexpr std::size_t kMaxRangeNames = 1000;  // then folded into "(other ranges)"
inline constexpr std::size_t kMaxRangeInstances = kernels::kMaxRangeInstances;
inline constexpr std::size_t kMaxOpenRanges = 100000;  // started, not yet ended
inline constexpr const char* kOtherRanges = "(other ranges)";

// What one chunk (a trace window, or kChunkSeconds of a whole-job trace) adds to
// the record, and the names it uses that no earlier chunk did.
struct Drained {
  kernels::NamesRecord names;
  kernels::ChunkRecord chunk;  // `seq`, span and `window` are the caller's to set
};

class ChunkBuilder {
 public:
  // Times are CUPTI timestamps (ns); `base_ns` is the one taken at start, all
  // times are written relative to it.
  explicit ChunkBuilder(std::uint64_t base_ns) : base_ns_(base_ns) {}

  void kernel(const KernelLaunch& launch, std::uint64_t start, std::uint64_t end,
              std::uint32_t stream);
  void copy(const CopyKey& key, std::uint64_t bytes, std::uint64_t start, std::uint64_t end,
            std::uint32_t stream);
  void memset(std::uint32_t device, std::uint64_t bytes, std::uint64_t start, std::uint64_t end,
              std::uint32_t stream);
  void sync(int type, std::uint64_t start, std::uint64_t end);
  void device(const kernels::DeviceEntry& info);  // its first sight of each device is kept
  // NVTX ranges as CUPTI's marker records give them: a start with the name, an
  // end with the same id. Push/pop and start/end ranges look alike there.
  void range_start(std::uint32_t id, std::uint64_t ts, std::string_view name,
                   std::string_view domain);
  void range_end(std::uint32_t id, std::uint64_t ts);
  void dropped(std::uint64_t n) { dropped_ += n; }

  // Everything since the last drain, as the next chunk; the builder starts the
  // next chunk empty and keeps only its name tables. The chunk's lists are
  // bounded: per launch configuration a histogram, busy times and
  // synchronisations as sketches of at most kernels::kMaxSketchSpans spans.
  Drained drain();

  // NVTX starts without an end, or ends without a start (so far).
  std::uint64_t unmatched_ranges() const { return ranges_unmatched_ + open_ranges_.size(); }

 private:
  void busy(std::uint32_t device, std::uint32_t stream, std::uint64_t start, std::uint64_t end);
  std::uint32_t name_id(const std::string& name);
  std::uint32_t config_id(const KernelLaunch& launch);

  std::uint64_t base_ns_;
  // The configurations seen, without their ids (`id` 0, `name` the name's id), in
  // an order of all their other fields.
  struct ConfigLess {
    bool operator()(const kernels::ConfigEntry& a, const kernels::ConfigEntry& b) const;
  };
  // Name tables, for the whole process: ids the chunks refer to.
  std::map<kernels::ConfigEntry, std::uint32_t, ConfigLess> config_ids_;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  // Per name id: a collective (kernels/record/kernel_names.hpp)? Classified once, when a
  // name is first seen, never per record; per configuration id the same, so a
  // kernel record costs one index more.
  std::vector<bool> name_collective_;
  std::vector<bool> config_collective_;
  std::set<std::uint32_t> devices_;  // whose entry is out
  kernels::NamesRecord new_names_;   // first seen since the last drain
  // This chunk's.
  std::map<std::uint32_t, KernelStats> kernels_;  // by configuration id
  std::map<CopyKey, CopyStats> copies_;
  std::map<std::uint32_t, CopyStats> memsets_;
  std::vector<std::pair<std::int64_t, std::int64_t>> syncs_;
  std::map<std::uint32_t, std::vector<std::pair<std::int64_t, std::int64_t>>> busy_;
  std::map<std::uint32_t, std::size_t> compact_at_;  // merge a device's list when it is this long
  std::map<std::uint32_t, kernels::CollectiveInstances> collectives_;  // by device
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::uint64_t, std::uint64_t>>
      streams_;  // (device, stream) -> (launches, busy ns)
  std::uint64_t dropped_ = 0;
  std::uint64_t kernel_keys_overflow_ = 0;
  std::uint64_t syncs_dropped_ = 0;

  struct OpenRange {
    std::uint64_t start = 0;
    std::size_t key = 0;
  };
  std::size_t range_key(std::string_view name, std::string_view domain);
  std::map<RangeKey, std::size_t> range_index_;  // for the whole process
  std::map<std::size_t, RangeStats> range_stats_;
  std::unordered_map<std::uint32_t, OpenRange> open_ranges_;
  std::deque<kernels::InstanceEntry> range_instances_;  // this chunk's most recent, by end
  std::uint64_t range_instances_dropped_ = 0;
  std::uint64_t range_names_folded_ = 0;
  std::uint64_t ranges_unmatched_ = 0;  // ends without a start, starts past the cap
};

}  // namespace gpulens::inject

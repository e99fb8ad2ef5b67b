#pragma once
// What the injection library keeps of the job's GPU activity, in the job's own
// process: per kernel launch configuration a count and a duration histogram, per
// copy kind totals, the synchronisations, and per device the union of busy
// intervals (kernels, copies, memsets on any stream). Pure C++: no CUPTI here, so
// the aggregation is tested without a GPU.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
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
  void dropped(std::uint64_t n) { dropped_ += n; }

  // The record's activity part (kernels, copies, memsets, syncs, busy intervals,
  // devices); the caller adds the process and status fields.
  nlohmann::json to_json();

  // Busy intervals of one device merged (sorted, overlaps joined), relative ns.
  std::vector<std::pair<std::int64_t, std::int64_t>> merged_busy(std::uint32_t device);

 private:
  void busy(std::uint32_t device, std::uint32_t stream, std::uint64_t start, std::uint64_t end);
  void compact(std::vector<std::pair<std::int64_t, std::int64_t>>& v);

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
};

}  // namespace gpulens::inject

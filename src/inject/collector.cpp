// SPDX-License-Identifier: Apache-2.0
#include "inject/collector.hpp"

#include <algorithm>
#include <cmath>

#include "core/intervals.hpp"

namespace gpulens::inject {
namespace {

constexpr std::size_t kMaxKernelKeys = 50000;    // launch configurations kept apart
constexpr std::size_t kMaxSyncs = 1000000;       // synchronisations kept with their times
constexpr std::size_t kCompactFirst = 1u << 16;  // busy intervals before the first merge

std::int64_t rel(std::uint64_t t, std::uint64_t base) {
  return static_cast<std::int64_t>(t) - static_cast<std::int64_t>(base);
}

}  // namespace

int duration_bucket(std::uint64_t ns) {
  if (ns == 0) return 0;
  return static_cast<int>(std::floor(std::log2(static_cast<double>(ns)) * 8.0)) + 1;
}

std::uint64_t bucket_low_ns(int bucket) {
  if (bucket <= 0) return 0;
  return static_cast<std::uint64_t>(std::ceil(std::exp2((bucket - 1) / 8.0)));
}

bool KernelKey::operator<(const KernelKey& o) const {
  return std::tie(device, name, grid[0], grid[1], grid[2], block[0], block[1], block[2], registers,
                  static_smem, dynamic_smem) <
         std::tie(o.device, o.name, o.grid[0], o.grid[1], o.grid[2], o.block[0], o.block[1],
                  o.block[2], o.registers, o.static_smem, o.dynamic_smem);
}

void Collector::kernel(const KernelKey& key, std::uint64_t start, std::uint64_t end,
                       std::uint32_t stream) {
  if (end < start) return;
  const std::uint64_t d = end - start;
  auto it = kernels_.find(key);
  if (it == kernels_.end()) {
    if (kernels_.size() >= kMaxKernelKeys) {
      // Past the cap, a new configuration is folded into one per name and device.
      KernelKey folded;
      folded.device = key.device;
      folded.name = key.name;
      ++kernel_keys_overflow_;
      it = kernels_.try_emplace(folded).first;
    } else {
      it = kernels_.try_emplace(key).first;
    }
  }
  KernelStats& s = it->second;
  ++s.count;
  s.total_ns += d;
  s.min_ns = std::min(s.min_ns, d);
  s.max_ns = std::max(s.max_ns, d);
  ++s.buckets[duration_bucket(d)];
  busy(key.device, stream, start, end);
}

void Collector::copy(const CopyKey& key, std::uint64_t bytes, std::uint64_t start,
                     std::uint64_t end, std::uint32_t stream) {
  if (end < start) return;
  CopyStats& s = copies_[key];
  ++s.count;
  s.bytes += bytes;
  s.total_ns += end - start;
  busy(key.device, stream, start, end);
}

void Collector::memset(std::uint32_t device, std::uint64_t bytes, std::uint64_t start,
                       std::uint64_t end, std::uint32_t stream) {
  if (end < start) return;
  CopyStats& s = memsets_[device];
  ++s.count;
  s.bytes += bytes;
  s.total_ns += end - start;
  busy(device, stream, start, end);
}

void Collector::sync(int type, std::uint64_t start, std::uint64_t end) {
  if (end < start || syncs_.size() >= kMaxSyncs) return;
  syncs_.emplace_back(rel(start, base_ns_), rel(end, base_ns_), type);
}

void Collector::busy(std::uint32_t device, std::uint32_t stream, std::uint64_t start,
                     std::uint64_t end) {
  auto& s = streams_[{device, stream}];
  ++s.first;
  s.second += end - start;
  auto& v = busy_[device];
  v.emplace_back(rel(start, base_ns_), rel(end, base_ns_));
  auto& limit = compact_at_[device];
  if (limit == 0) limit = kCompactFirst;
  if (v.size() >= limit) {
    merge_intervals(v);
    // Back-to-back work merges into few intervals; a job of many short gaps does
    // not, and then the list is allowed to grow before the next merge.
    limit = std::max(kCompactFirst, v.size() * 2);
  }
}

std::size_t Collector::range_key(std::string_view name, std::string_view domain) {
  RangeKey k{std::string(domain.substr(0, kMaxRangeNameChars)),
             std::string(name.substr(0, kMaxRangeNameChars))};
  if (auto it = range_index_.find(k); it != range_index_.end()) return it->second;
  if (ranges_.size() >= kMaxRangeNames) {
    ++range_names_folded_;
    k = RangeKey{"", kOtherRanges};
    if (auto it = range_index_.find(k); it != range_index_.end()) return it->second;
  }
  range_index_.emplace(k, ranges_.size());
  ranges_.emplace_back(k, RangeStats{});
  return ranges_.size() - 1;
}

void Collector::range_start(std::uint32_t id, std::uint64_t ts, std::string_view name,
                            std::string_view domain) {
  if (open_ranges_.size() >= kMaxOpenRanges && !open_ranges_.contains(id)) {
    ++ranges_unmatched_;  // ranges that never end must not grow the table without bound
    return;
  }
  open_ranges_[id] = OpenRange{ts, range_key(name, domain)};
}

void Collector::range_end(std::uint32_t id, std::uint64_t ts) {
  auto it = open_ranges_.find(id);
  if (it == open_ranges_.end() || ts < it->second.start) {
    ++ranges_unmatched_;  // started before CUPTI recorded, or past the cap
    if (it != open_ranges_.end()) open_ranges_.erase(it);
    return;
  }
  const OpenRange r = it->second;
  open_ranges_.erase(it);
  const std::uint64_t d = ts - r.start;
  RangeStats& s = ranges_[r.key].second;
  ++s.count;
  s.total_ns += d;
  s.min_ns = std::min(s.min_ns, d);
  s.max_ns = std::max(s.max_ns, d);
  range_instances_.push_back({rel(r.start, base_ns_), rel(ts, base_ns_), r.key});
  if (range_instances_.size() > kMaxRangeInstances) {
    range_instances_.pop_front();
    ++range_instances_dropped_;
  }
}

std::vector<std::pair<std::int64_t, std::int64_t>> Collector::merged_busy(std::uint32_t device) {
  auto it = busy_.find(device);
  if (it == busy_.end()) return {};
  merge_intervals(it->second);
  return it->second;
}

nlohmann::json Collector::to_json() {
  using nlohmann::json;
  json kernels = json::array();
  for (const auto& [k, s] : kernels_) {
    json hist = json::array();
    for (const auto& [b, n] : s.buckets) hist.push_back({b, n});
    kernels.push_back({{"device", k.device},
                       {"name", k.name},
                       {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                       {"block", {k.block[0], k.block[1], k.block[2]}},
                       {"registers", k.registers},
                       {"static_smem", k.static_smem},
                       {"dynamic_smem", k.dynamic_smem},
                       {"count", s.count},
                       {"total_ns", s.total_ns},
                       {"min_ns", s.min_ns},
                       {"max_ns", s.max_ns},
                       {"hist", hist}});
  }
  json copies = json::array();
  for (const auto& [k, s] : copies_) {
    copies.push_back({{"device", k.device},
                      {"kind", k.kind},
                      {"src", k.src},
                      {"dst", k.dst},
                      {"count", s.count},
                      {"bytes", s.bytes},
                      {"total_ns", s.total_ns}});
  }
  json memsets = json::array();
  for (const auto& [d, s] : memsets_) {
    memsets.push_back(
        {{"device", d}, {"count", s.count}, {"bytes", s.bytes}, {"total_ns", s.total_ns}});
  }
  json syncs = json::array();
  for (const auto& [a, b, t] : syncs_) syncs.push_back({a, b, t});
  json busy = json::array();
  for (auto& [d, v] : busy_) {
    merge_intervals(v);
    json flat = json::array();
    for (const auto& [a, b] : v) {
      flat.push_back(a);
      flat.push_back(b);
    }
    busy.push_back({{"device", d}, {"intervals", flat}});
  }
  json streams = json::array();
  for (const auto& [k, s] : streams_) {
    streams.push_back(
        {{"device", k.first}, {"stream", k.second}, {"launches", s.first}, {"busy_ns", s.second}});
  }
  json devices = json::array();
  for (const auto& [id, d] : devices_) {
    devices.push_back({{"id", id},
                       {"name", d.name},
                       {"sms", d.sms},
                       {"max_blocks_per_sm", d.max_blocks_per_sm},
                       {"max_threads_per_sm", d.max_threads_per_sm},
                       {"max_warps_per_sm", d.max_warps_per_sm},
                       {"registers_per_sm", d.registers_per_sm},
                       {"shared_per_sm", d.shared_per_sm},
                       {"cc", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)}});
  }
  json ranges = json::array();
  for (const auto& [k, s] : ranges_) {
    ranges.push_back({{"domain", k.domain},
                      {"name", k.name},
                      {"count", s.count},
                      {"total_ns", s.total_ns},
                      {"min_ns", s.count > 0 ? s.min_ns : 0},
                      {"max_ns", s.max_ns}});
  }
  json instances = json::array();
  for (const auto& r : range_instances_) {
    instances.push_back(r.start);
    instances.push_back(r.end);
    instances.push_back(r.key);
  }
  json nvtx = {{"ranges", ranges},
               {"instances", instances},
               {"instances_dropped", range_instances_dropped_},
               {"names_folded", range_names_folded_},
               {"unmatched", ranges_unmatched_ + open_ranges_.size()}};
  return {
      {"devices", devices}, {"kernels", kernels},  {"copies", copies},
      {"memsets", memsets}, {"syncs", syncs},      {"busy", busy},
      {"streams", streams}, {"dropped", dropped_}, {"kernel_configs_folded", kernel_keys_overflow_},
      {"nvtx", nvtx}};
}

}  // namespace gpulens::inject

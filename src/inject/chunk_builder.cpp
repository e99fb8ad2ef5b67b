// SPDX-License-Identifier: Apache-2.0
#include "inject/chunk_builder.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/intervals.hpp"
#include "kernels/record/kernel_names.hpp"

namespace gpulens::inject {
namespace {

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

bool ChunkBuilder::ConfigLess::operator()(const kernels::ConfigEntry& a,
                                          const kernels::ConfigEntry& b) const {
  return std::tie(a.device, a.name, a.grid[0], a.grid[1], a.grid[2], a.block[0], a.block[1],
                  a.block[2], a.registers, a.static_smem, a.dynamic_smem) <
         std::tie(b.device, b.name, b.grid[0], b.grid[1], b.grid[2], b.block[0], b.block[1],
                  b.block[2], b.registers, b.static_smem, b.dynamic_smem);
}

std::uint32_t ChunkBuilder::name_id(const std::string& name) {
  auto it = name_ids_.find(name);
  if (it == name_ids_.end()) {
    it = name_ids_.emplace(name, static_cast<std::uint32_t>(name_ids_.size())).first;
    new_names_.kernel_names.emplace_back(it->second, name);
    name_collective_.push_back(kernels::is_collective(name));
  }
  return it->second;
}

std::uint32_t ChunkBuilder::config_id(const KernelLaunch& launch) {
  kernels::ConfigEntry k = launch.config;
  k.id = 0;
  k.name = name_id(launch.name);
  if (auto it = config_ids_.find(k); it != config_ids_.end()) return it->second;
  if (config_ids_.size() >= kMaxLaunchConfigs) {
    // Past the cap, a new configuration is folded into one per name and device.
    const kernels::ConfigEntry launched = k;
    k = kernels::ConfigEntry{};
    k.name = launched.name;
    k.device = launched.device;
    ++kernel_keys_overflow_;
    if (auto it = config_ids_.find(k); it != config_ids_.end()) return it->second;
  }
  const auto id = static_cast<std::uint32_t>(config_ids_.size());
  config_ids_.emplace(k, id);
  k.id = id;
  new_names_.configs.push_back(k);
  config_collective_.push_back(name_collective_[k.name]);
  return id;
}

void ChunkBuilder::kernel(const KernelLaunch& launch, std::uint64_t start, std::uint64_t end,
                          std::uint32_t stream) {
  if (end < start) return;
  const std::uint64_t d = end - start;
  const std::uint32_t id = config_id(launch);
  const std::uint32_t device = launch.config.device;
  KernelStats& s = kernels_[id];
  ++s.count;
  s.total_ns += d;
  s.min_ns = std::min(s.min_ns, d);
  s.max_ns = std::max(s.max_ns, d);
  ++s.buckets[duration_bucket(d)];
  busy(device, stream, start, end);
  if (config_collective_[id]) {
    auto& c = collectives_[device];
    if (c.instances.size() < kernels::kMaxChunkCollectives) {
      c.instances.emplace_back(rel(start, base_ns_), rel(end, base_ns_));
    } else {
      ++c.dropped;  // the first ones are kept; the split matches instances by time
    }
  }
}

void ChunkBuilder::copy(const CopyKey& key, std::uint64_t bytes, std::uint64_t start,
                        std::uint64_t end, std::uint32_t stream) {
  if (end < start) return;
  CopyStats& s = copies_[key];
  ++s.count;
  s.bytes += bytes;
  s.total_ns += end - start;
  busy(key.device, stream, start, end);
}

void ChunkBuilder::memset(std::uint32_t device, std::uint64_t bytes, std::uint64_t start,
                          std::uint64_t end, std::uint32_t stream) {
  if (end < start) return;
  CopyStats& s = memsets_[device];
  ++s.count;
  s.bytes += bytes;
  s.total_ns += end - start;
  busy(device, stream, start, end);
}

void ChunkBuilder::sync(int /*type*/, std::uint64_t start, std::uint64_t end) {
  if (end < start) return;
  if (syncs_.size() >= kMaxSyncs) {
    ++syncs_dropped_;  // a chunk's list is bounded even before its sketch is made
    return;
  }
  syncs_.emplace_back(rel(start, base_ns_), rel(end, base_ns_));
}

void ChunkBuilder::device(const kernels::DeviceEntry& info) {
  if (devices_.insert(info.id).second) new_names_.devices.push_back(info);
}

void ChunkBuilder::busy(std::uint32_t device, std::uint32_t stream, std::uint64_t start,
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

std::size_t ChunkBuilder::range_key(std::string_view name, std::string_view domain) {
  RangeKey k{std::string(domain.substr(0, kMaxRangeNameChars)),
             std::string(name.substr(0, kMaxRangeNameChars))};
  if (auto it = range_index_.find(k); it != range_index_.end()) return it->second;
  if (range_index_.size() >= kMaxRangeNames) {
    ++range_names_folded_;
    k = RangeKey{"", kOtherRanges};
    if (auto it = range_index_.find(k); it != range_index_.end()) return it->second;
  }
  const std::size_t id = range_index_.size();
  new_names_.range_names.push_back({static_cast<std::uint32_t>(id), k.domain, k.name});
  range_index_.emplace(std::move(k), id);
  return id;
}

void ChunkBuilder::range_start(std::uint32_t id, std::uint64_t ts, std::string_view name,
                               std::string_view domain) {
  if (open_ranges_.size() >= kMaxOpenRanges && !open_ranges_.contains(id)) {
    ++ranges_unmatched_;  // ranges that never end must not grow the table without bound
    return;
  }
  open_ranges_[id] = OpenRange{ts, range_key(name, domain)};
}

void ChunkBuilder::range_end(std::uint32_t id, std::uint64_t ts) {
  auto it = open_ranges_.find(id);
  if (it == open_ranges_.end() || ts < it->second.start) {
    ++ranges_unmatched_;  // started before CUPTI recorded, or past the cap
    if (it != open_ranges_.end()) open_ranges_.erase(it);
    return;
  }
  const OpenRange r = it->second;
  open_ranges_.erase(it);
  const std::uint64_t d = ts - r.start;
  RangeStats& s = range_stats_[r.key];
  ++s.count;
  s.total_ns += d;
  s.min_ns = std::min(s.min_ns, d);
  s.max_ns = std::max(s.max_ns, d);
  range_instances_.push_back(
      {rel(r.start, base_ns_), rel(ts, base_ns_), static_cast<std::uint32_t>(r.key)});
  if (range_instances_.size() > kernels::kMaxChunkInstances) {
    range_instances_.pop_front();
    ++range_instances_dropped_;
  }
}

Drained ChunkBuilder::drain() {
  Drained out;
  out.names = std::move(new_names_);
  new_names_ = {};
  kernels::ChunkRecord& c = out.chunk;
  for (auto& [id, st] : kernels_) {
    kernels::KernelEntry e;
    e.config = id, e.count = st.count, e.total_ns = st.total_ns;
    e.min_ns = st.count > 0 ? st.min_ns : 0, e.max_ns = st.max_ns;
    e.hist.assign(st.buckets.begin(), st.buckets.end());
    c.kernels.push_back(std::move(e));
  }
  for (const auto& [k, st] : copies_) {
    c.copies.push_back({k.device, k.kind, k.src, k.dst, st.count, st.bytes, st.total_ns});
  }
  for (const auto& [d, st] : memsets_) c.memsets.push_back({d, st.count, st.bytes, st.total_ns});
  for (const auto& [k, st] : streams_)
    c.streams.push_back({k.first, k.second, st.first, st.second});
  for (auto& [d, v] : busy_) c.busy.push_back({d, kernels::sketch_spans(std::move(v))});
  c.syncs = kernels::sketch_spans(std::move(syncs_));
  for (const auto& [id, st] : range_stats_) {
    c.ranges.push_back({static_cast<std::uint32_t>(id), st.count, st.total_ns,
                        st.count > 0 ? st.min_ns : 0, st.max_ns});
  }
  c.instances.assign(range_instances_.begin(), range_instances_.end());
  for (auto& [d, col] : collectives_) {
    col.device = d;
    std::sort(col.instances.begin(), col.instances.end());
    c.collectives.push_back(std::move(col));
  }
  c.dropped = dropped_ + syncs_dropped_;
  c.instances_dropped = range_instances_dropped_;
  c.names_folded = range_names_folded_;
  c.configs_folded = kernel_keys_overflow_;
  kernels_.clear(), copies_.clear(), memsets_.clear(), streams_.clear(), busy_.clear();
  compact_at_.clear(), collectives_.clear(), syncs_.clear(), range_stats_.clear(),
      range_instances_.clear();
  dropped_ = syncs_dropped_ = range_instances_dropped_ = range_names_folded_ = 0;
  kernel_keys_overflow_ = 0;
  return out;
}

}  // namespace gpulens::inject

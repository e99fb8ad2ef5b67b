// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/nvtx_ranges.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

namespace gpulens::kernels {
namespace {

using Intervals = NvtxRanges::Intervals;

std::string range_display_name(const NvtxRecord::Range& r) {
  return r.domain.empty() ? r.name : r.domain + ": " + r.name;
}

}  // namespace

double busy_within(const Intervals& busy, double from, double to) {
  if (!(to > from)) return 0;
  auto it = std::lower_bound(busy.begin(), busy.end(), from,
                             [](const auto& iv, double t) { return iv.second <= t; });
  double sum = 0;
  for (; it != busy.end() && it->first < to; ++it) {
    sum += std::min(it->second, to) - std::max(it->first, from);
  }
  return sum;
}

std::vector<double> idle_by_innermost_range(const Intervals& busy, std::vector<RangeSpan> spans,
                                            std::size_t keys, double from, double to) {
  std::vector<double> idle(keys + 1, 0.0);
  if (!(to > from)) return idle;
  std::vector<double> cuts = {from, to};
  for (const auto& r : spans) {
    if (r.start > from && r.start < to) cuts.push_back(r.start);
    if (r.end > from && r.end < to) cuts.push_back(r.end);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::sort(spans.begin(), spans.end(),
            [](const RangeSpan& a, const RangeSpan& b) { return a.start < b.start; });
  // Open ranges, innermost first: started last, then ending first. Ranges that
  // have ended are dropped when they come to the front.
  std::set<std::tuple<double, double, std::size_t>> open;
  std::size_t next = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double x = cuts[i], y = cuts[i + 1];
    for (; next < spans.size() && spans[next].start <= x; ++next) {
      if (spans[next].end > x && spans[next].key < keys) {
        open.emplace(-spans[next].start, spans[next].end, next);
      }
    }
    while (!open.empty() && std::get<1>(*open.begin()) <= x) open.erase(open.begin());
    const std::size_t key = open.empty() ? keys : spans[std::get<2>(*open.begin())].key;
    idle[key] += (y - x) - busy_within(busy, x, y);
  }
  return idle;
}

void NvtxRanges::add_process(const NvtxRecord& nvtx, const std::function<double(std::int64_t)>& t,
                             Intervals busy, std::set<std::uint32_t> devices) {
  const std::string& st = nvtx.status;
  if (st == "injection_taken" || st == "cupti_error" || st == "not_set") {
    missing_.insert(nvtx.reason);
  }
  // Record name index -> row of the view, merged by name over processes.
  std::vector<std::size_t> keys;
  for (const auto& rr : nvtx.ranges) {
    const std::string name = range_display_name(rr);
    auto [it, added] = index_.try_emplace(name, rows_.size());
    if (added) {
      rows_.emplace_back();
      rows_.back().name = name;
    }
    RangeRow& row = rows_[it->second];
    row.count += rr.count;
    row.total_s += static_cast<double>(rr.total_ns) / 1e9;
    keys.push_back(it->second);
  }
  Process proc;
  for (const auto& in : nvtx.instances) {
    if (in.range >= keys.size()) continue;
    proc.spans.push_back({t(in.start_ns), t(in.end_ns), keys[in.range]});
  }
  totals_.instances_dropped += nvtx.instances_dropped;
  totals_.names_folded += nvtx.names_folded;
  totals_.unmatched += nvtx.unmatched;
  proc.dropped = nvtx.instances_dropped > 0;
  if (proc.spans.empty()) return;
  proc.kept_from = proc.spans.front().start;
  for (const auto& sp : proc.spans) proc.kept_from = std::min(proc.kept_from, sp.start);
  proc.busy = std::move(busy);
  proc.devices = std::move(devices);
  processes_.push_back(std::move(proc));
}

std::optional<std::string> NvtxRanges::missing_note() const {
  if (missing_.empty()) return std::nullopt;
  std::string why;
  for (const auto& w : missing_) why += (why.empty() ? "" : "; ") + w;
  return "NVTX ranges not recorded: " + why;
}

namespace {

// Whether [from, to] lies whole inside one of the process's devices' traced spans.
bool inside_traced(const std::map<std::uint32_t, NvtxRanges::Intervals>& traced,
                   const std::set<std::uint32_t>& devices, double from, double to) {
  for (const auto dev : devices) {
    auto it = traced.find(dev);
    if (it == traced.end()) continue;
    for (const auto& [a, b] : it->second) {
      if (from >= a && to <= b) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<NvtxView> NvtxRanges::finish(const std::map<std::uint32_t, Intervals>& busy,
                                           const std::map<std::uint32_t, Intervals>& windows,
                                           const std::map<std::uint32_t, Intervals>* traced) {
  if (rows_.empty()) return std::nullopt;
  NvtxView nvtx = totals_;
  std::vector<RangeRow> range_rows = std::move(rows_);
  rows_.clear();
  for (const auto& p : processes_) {
    for (const auto& sp : p.spans) {
      // Outside the trace windows the GPU's work was not recorded: not idle, unknown.
      if (traced != nullptr && !inside_traced(*traced, p.devices, sp.start, sp.end)) continue;
      RangeRow& row = range_rows[sp.key];
      ++row.measured;
      row.measured_s += sp.end - sp.start;
      row.busy_s += busy_within(p.busy, sp.start, sp.end);
    }
  }
  for (const auto& [dev, v] : busy) {
    auto w = windows.find(dev);
    if (v.empty() || w == windows.end()) continue;
    std::vector<RangeSpan> spans;
    double kept_from = -std::numeric_limits<double>::infinity();
    for (const auto& p : processes_) {
      if (!p.devices.contains(dev)) continue;
      spans.insert(spans.end(), p.spans.begin(), p.spans.end());
      if (p.dropped) kept_from = std::max(kept_from, p.kept_from);
    }
    if (spans.empty()) continue;
    for (auto [from, to] : w->second) {
      if (kept_from > from) from = kept_from, nvtx.window_clipped = true;
      if (!(to > from)) continue;
      const auto idle = idle_by_innermost_range(v, spans, range_rows.size(), from, to);
      for (std::size_t k = 0; k < range_rows.size(); ++k) {
        range_rows[k].attributed_idle_s += idle[k];
        nvtx.window_idle_s += idle[k];
      }
      nvtx.unranged_idle_s += idle.back();
      nvtx.window_idle_s += idle.back();
    }
  }
  for (auto& row : range_rows) {
    row.mean_s = row.count > 0 ? row.total_s / static_cast<double>(row.count) : 0;
    row.busy_share = row.measured_s > 0 ? row.busy_s / row.measured_s : 0;
    row.idle_s = row.measured_s - row.busy_s;
  }
  std::sort(range_rows.begin(), range_rows.end(), [](const RangeRow& a, const RangeRow& b) {
    return a.total_s != b.total_s ? a.total_s > b.total_s : a.name < b.name;
  });
  nvtx.ranges = std::move(range_rows);
  return nvtx;
}

}  // namespace gpulens::kernels

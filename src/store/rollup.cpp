// SPDX-License-Identifier: Apache-2.0
#include "store/rollup.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace gpulens::store {
namespace {

struct Accumulator {
  RollupRow row;
  std::array<double, kMetricCount> sum{};
  std::array<int, kMetricCount> count{};
  std::uint64_t reasons = 0;
  bool any_reasons = false;

  void add(const StoredSample& s) {
    ++row.n;
    if (s.throttled) ++row.throttled;
    if (!s.state.empty()) ++row.state_counts[s.state];
    for (const auto& info : all_metrics()) {
      const auto v = s.values.get(info.id);
      if (!v) continue;
      const auto i = index_of(info.id);
      if (info.id == Metric::ClockEventReasons) {
        reasons |= static_cast<std::uint64_t>(*v);
        any_reasons = true;
        continue;
      }
      sum[i] += *v;
      ++count[i];
      const auto lo = row.min.get(info.id);
      const auto hi = row.max.get(info.id);
      row.min.set(info.id, lo ? std::min(*lo, *v) : *v);
      row.max.set(info.id, hi ? std::max(*hi, *v) : *v);
    }
  }

  RollupRow finish() {
    for (const auto& info : all_metrics()) {
      const auto i = index_of(info.id);
      if (count[i] > 0) row.mean.set(info.id, sum[i] / count[i]);
    }
    if (any_reasons) row.max.set(Metric::ClockEventReasons, static_cast<double>(reasons));
    return std::move(row);
  }
};

}  // namespace

std::vector<RollupRow> roll_up(const std::vector<StoredSample>& samples) {
  std::map<std::pair<int, std::int64_t>, Accumulator> acc;
  for (const auto& s : samples) {
    const auto key = std::make_pair(s.gpu, minute_of(s.t));
    auto [it, inserted] = acc.try_emplace(key);
    if (inserted) {
      it->second.row.gpu = s.gpu;
      it->second.row.minute = key.second;
    }
    it->second.add(s);
  }
  std::vector<RollupRow> rows;
  rows.reserve(acc.size());
  for (auto& [key, a] : acc) rows.push_back(a.finish());
  return rows;
}

}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#include "core/value_ranges.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpulens {

namespace {

constexpr double kExactInteger = 9007199254740992.0;  // 2^53

}  // namespace

ValueRange value_range(Metric m) {
  const std::string_view unit = metric_info(m).unit;
  if (unit == "%") return {0, 100, 0.5};
  if (unit == "W") return {0, 100000, 0};
  if (unit == "C") return {-273.15, 1000, 0};
  if (unit == "MHz") return {0, 100000, 0};
  if (unit == "MiB/s") return {0, 1e9, 0};
  if (unit == "MiB") return {0, 1e12, 0};
  // "mJ", "mask" (clock event reasons) and the unitless counters (pstate, ECC
  // errors): non-negative integers a double holds exactly.
  return {0, kExactInteger, 0};
}

std::optional<double> checked_reading(Metric m, double v) {
  if (!std::isfinite(v)) return std::nullopt;
  const ValueRange r = value_range(m);
  if (v < r.min - r.tolerance || v > r.max + r.tolerance) return std::nullopt;
  return std::clamp(v, r.min, r.max);
}

bool plausible_time(double t) {
  return std::isfinite(t) && t >= kEarliestTime && t < kLatestTime;
}

std::size_t drop_out_of_range(MetricValues& values, std::string* first) {
  std::size_t dropped = 0;
  for (const auto& info : all_metrics()) {
    const auto v = values.get(info.id);
    if (!v) continue;
    if (const auto ok = checked_reading(info.id, *v)) {
      if (*ok != *v) values.set(info.id, *ok);
      continue;
    }
    values.clear(info.id);
    if (first != nullptr && first->empty()) *first = fmt::format("{} {}", info.key, *v);
    ++dropped;
  }
  return dropped;
}

}  // namespace gpulens

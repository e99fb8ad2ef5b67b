// SPDX-License-Identifier: Apache-2.0
#pragma once
// The physical range of each reading, derived from its unit in one place, and the
// times a sample may carry (docs/trace-format.md, "Ranges"). Readers drop and count
// what lies outside, so that no later arithmetic (a mean, a conversion to integer
// milliseconds or fixed-point columns of the history) meets 1e308 or NaN.
#include <cstddef>
#include <optional>
#include <string>

#include "core/metric.hpp"
#include "core/sample.hpp"

namespace gpulens {

struct ValueRange {
  double min = 0;
  double max = 0;
  // Values within this much outside [min, max] are clamped to it (counter jitter,
  // e.g. 100.2 % utilization); further out they are dropped.
  double tolerance = 0;
};

// From metric_info(m).unit: "%" 0..100 (tolerance 0.5), "W" 0..100000, "C"
// -273.15..1000, "MHz" 0..100000, "MiB/s" 0..1e9, "MiB" 0..1e12; "mJ", "mask"
// and the unitless counters 0..2^53 (integers a double holds exactly).
ValueRange value_range(Metric m);

// `v` clamped into its metric's range, or nullopt when not finite or outside by
// more than the tolerance.
std::optional<double> checked_reading(Metric m, double v);

// Sample and mark times: Unix seconds within 1900-01-01 .. 2200-01-01, so that
// times in milliseconds fit an int64 many times over.
inline constexpr double kEarliestTime = -2208988800.0;  // 1900-01-01T00:00:00Z
inline constexpr double kLatestTime = 7258118400.0;     // 2200-01-01T00:00:00Z
bool plausible_time(double t);

// Drops the readings of `values` outside their range (and clamps those within the
// tolerance). Returns how many were dropped; `first`, when given and empty, gets
// the first one in words ("sm_active 1e+308").
std::size_t drop_out_of_range(MetricValues& values, std::string* first = nullptr);

}  // namespace gpulens

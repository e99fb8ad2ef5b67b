// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the store keeps, as plain values, and the one-minute rollup as a pure
// function of raw samples (tested without a database).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/sample.hpp"

namespace gpulens::store {

// One GPU's sample as history keeps it: the metrics and the diagnosis verdict.
struct StoredSample {
  int gpu = 0;
  double t = 0;
  MetricValues values;
  std::string state;  // diagnosis state id; empty when no verdict
  bool throttled = false;
};

// One GPU's minute: mean, min and max of each metric over the samples present,
// and how many samples were in each state. For the clock-reason bitmask a mean
// means nothing: max holds the OR of the minute's reasons, mean and min stay empty.
struct RollupRow {
  int gpu = 0;
  std::int64_t minute = 0;  // Unix seconds of the minute's start
  int n = 0;                // samples
  int throttled = 0;        // samples flagged throttled
  MetricValues mean;
  MetricValues min;
  MetricValues max;
  std::map<std::string, int> state_counts;
};

inline std::int64_t minute_of(double t) {
  const auto s = static_cast<std::int64_t>(t);
  return s - (s % 60 + 60) % 60;
}

// Rollups of `samples` (any GPUs, any order), one row per GPU and minute,
// sorted by GPU then minute.
std::vector<RollupRow> roll_up(const std::vector<StoredSample>& samples);

}  // namespace gpulens::store

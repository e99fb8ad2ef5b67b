// SPDX-License-Identifier: Apache-2.0
#pragma once
// Phases bounded by "NAME:start" / "NAME:end" marks, and per-phase metric means.
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"

namespace gpulens {

struct Phase {
  std::string name;
  double start = 0;
  double end = 0;
  nlohmann::json start_fields = nlohmann::json::object();
  nlohmann::json end_fields = nlohmann::json::object();
};

// Pairs start/end marks in time order. A start without an end runs to `trace_end`.
std::vector<Phase> find_phases(const std::vector<Mark>& marks, double trace_end);

// Mean of a metric over samples of one GPU whose t lies in [from, to]; nullopt when
// no sample in that window has the metric.
std::optional<double> mean_over(const std::vector<Sample>& samples, int gpu, Metric m, double from,
                                double to);

}  // namespace gpulens

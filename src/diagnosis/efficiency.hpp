// SPDX-License-Identifier: Apache-2.0
#pragma once
// Packet.ai's efficiency score: SM activity / GPU utilization x 100.
#include <optional>

#include "core/sample.hpp"

namespace gpulens::diagnosis {

// Below this utilization (%) the ratio means nothing: a few kernel microseconds
// divided into a near-zero denominator would read as any number at all.
inline constexpr double kEfficiencyMinUtil = 1.0;

// SM activity (%) / GPU utilization (%) x 100, capped at 100 (the two counters
// average over different intervals, so SM activity can briefly read above it).
// nullopt, never 0 or 100, when either value is missing or utilization is near 0.
std::optional<double> efficiency_score(std::optional<double> gpu_util,
                                       std::optional<double> sm_active,
                                       double min_util = kEfficiencyMinUtil);
std::optional<double> efficiency_score(const Sample& sample);
std::optional<double> efficiency_score(const MetricValues& values);

}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/efficiency.hpp"

#include <algorithm>
#include <cmath>

namespace gpulens::diagnosis {

std::optional<double> efficiency_score(std::optional<double> gpu_util,
                                       std::optional<double> sm_active, double min_util) {
  if (!gpu_util || !sm_active) return std::nullopt;
  if (!std::isfinite(*gpu_util) || !std::isfinite(*sm_active)) return std::nullopt;
  if (*gpu_util < min_util) return std::nullopt;
  return std::clamp(*sm_active / *gpu_util * 100.0, 0.0, 100.0);
}

std::optional<double> efficiency_score(const Sample& sample) {
  return efficiency_score(sample.values);
}

std::optional<double> efficiency_score(const MetricValues& values) {
  return efficiency_score(values.get(Metric::GpuUtil), values.get(Metric::SmActive));
}

}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
#include "core/gpm_interval.hpp"

namespace gpulens {

bool gpm_interval_empty(const Sample& sample) {
  const MetricValues& v = sample.values;
  // DRAM bandwidth is computed with the other GPM metrics: absent beside a
  // present SM activity only when the driver had no counters for the interval.
  if (!v.has(Metric::SmActive) || v.has(Metric::DramActive)) return false;
  for (const auto& info : all_metrics()) {
    if (info.source != MetricSource::Gpm) continue;
    if (const auto x = v.get(info.id); x && *x != 0.0) return false;
  }
  return true;
}

bool drop_empty_gpm_interval(Sample& sample) {
  if (!gpm_interval_empty(sample)) return false;
  for (const auto& info : all_metrics()) {
    if (info.source == MetricSource::Gpm) sample.values.clear(info.id);
  }
  return true;
}

}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
// Pieces of the report that need no builder state: state shares, and a trace
// turned into the ticks a replay source would deliver.
#include <cmath>

#include "diagnosis/timeline.hpp"

namespace gpulens {
namespace {

constexpr double kSameTick = 1e-6;  // samples this close belong to one tick

}  // namespace

double StateShares::total() const {
  double t = 0;
  for (double s : seconds) t += s;
  return t;
}

double StateShares::share(GpuState s) const {
  const double t = total();
  return t > 0 ? seconds[state_index(s)] / t : 0.0;
}

GpuState StateShares::majority() const {
  std::size_t best = state_index(GpuState::Unknown);
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    if (seconds[i] > seconds[best]) best = i;
  }
  return static_cast<GpuState>(best);
}

std::vector<Tick> ticks_from_trace(const Trace& trace) {
  std::vector<Tick> ticks;
  std::size_t m = 0;
  const auto& samples = trace.samples;
  for (std::size_t i = 0; i < samples.size();) {
    Tick tick;
    tick.t = samples[i].t;
    while (m < trace.marks.size() && trace.marks[m].t <= tick.t + kSameTick) {
      tick.marks.push_back(trace.marks[m++]);
    }
    while (i < samples.size() && std::abs(samples[i].t - tick.t) <= kSameTick) {
      tick.samples.push_back(samples[i++]);
    }
    ticks.push_back(std::move(tick));
  }
  if (m < trace.marks.size()) {
    Tick tail;
    tail.marks.assign(trace.marks.begin() + static_cast<std::ptrdiff_t>(m), trace.marks.end());
    tail.t = tail.marks.back().t;
    ticks.push_back(std::move(tail));
  }
  return ticks;
}

DiagnosisReport diagnose_trace(const Trace& trace, const DiagnosisConfig& config,
                               std::vector<std::vector<int>> job_groups) {
  ReportBuilder builder(trace.header, config, std::move(job_groups));
  for (const auto& w : trace.warnings) builder.note(w);
  for (const auto& tick : ticks_from_trace(trace)) builder.add(tick);
  return builder.finish();
}

}  // namespace gpulens

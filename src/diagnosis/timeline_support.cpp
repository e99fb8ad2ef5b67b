// SPDX-License-Identifier: Apache-2.0
// Pieces of the report that need no builder state: state shares, and a trace
// turned into the ticks a replay source would deliver.
#include "core/tick_grouper.hpp"
#include "diagnosis/timeline.hpp"

namespace gpulens::diagnosis {
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
  // The reader keeps samples and marks apart; in time order (a mark before the
  // samples of its time, as the recorder writes them) they are the file's order.
  std::vector<Tick> ticks;
  TickGrouper grouper;
  const auto keep = [&](std::optional<Tick> tick) {
    if (tick) ticks.push_back(std::move(*tick));
  };
  std::size_t m = 0;
  for (const auto& sample : trace.samples) {
    while (m < trace.marks.size() && trace.marks[m].t <= sample.t + kSameTickSeconds) {
      keep(grouper.add(trace.marks[m++]));
    }
    keep(grouper.add(sample));
  }
  while (m < trace.marks.size()) keep(grouper.add(trace.marks[m++]));
  keep(grouper.finish());
  return ticks;
}

DiagnosisReport diagnose_trace(const Trace& trace, const DiagnosisConfig& config,
                               std::vector<std::vector<int>> job_groups) {
  ReportBuilder builder(trace.header, config, std::move(job_groups));
  for (const auto& w : trace.warnings) builder.note(w);
  for (const auto& tick : ticks_from_trace(trace)) builder.add(tick);
  return builder.finish();
}

}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
#include "core/phase.hpp"

#include <algorithm>

namespace gpulens {

std::optional<PhaseMark> phase_mark(std::string_view mark_name) {
  constexpr std::string_view kStart = ":start";
  constexpr std::string_view kEnd = ":end";
  if (mark_name.size() > kStart.size() && mark_name.ends_with(kStart)) {
    return PhaseMark{true, mark_name.substr(0, mark_name.size() - kStart.size())};
  }
  if (mark_name.size() > kEnd.size() && mark_name.ends_with(kEnd)) {
    return PhaseMark{false, mark_name.substr(0, mark_name.size() - kEnd.size())};
  }
  return std::nullopt;
}

std::vector<Phase> find_phases(const std::vector<Mark>& marks, double trace_end) {
  std::vector<Phase> phases;
  OpenPhaseStacks<std::size_t> open;  // indexes into phases still waiting for their end
  for (const auto& mark : marks) {
    const auto pm = phase_mark(mark.name);
    if (!pm) continue;
    if (pm->start) {
      Phase p;
      p.name = std::string(pm->name);
      p.start = mark.t;
      p.end = trace_end;
      p.start_fields = mark.fields;
      open.push(pm->name, phases.size());
      phases.push_back(std::move(p));
    } else if (const auto i = open.pop(pm->name)) {
      phases[*i].end = mark.t;
      phases[*i].end_fields = mark.fields;
    }
  }
  std::stable_sort(phases.begin(), phases.end(),
                   [](const Phase& a, const Phase& b) { return a.start < b.start; });
  return phases;
}

std::optional<double> mean_over(const std::vector<Sample>& samples, int gpu, Metric m, double from,
                                double to) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& s : samples) {
    if (s.gpu != gpu || s.t < from || s.t > to) continue;
    if (const auto v = s.values.get(m)) {
      sum += *v;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

}  // namespace gpulens

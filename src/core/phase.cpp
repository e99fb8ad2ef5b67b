// SPDX-License-Identifier: Apache-2.0
#include "core/phase.hpp"

#include <algorithm>
#include <string_view>

namespace gpulens {

std::vector<Phase> find_phases(const std::vector<Mark>& marks, double trace_end) {
  std::vector<Phase> phases;
  std::vector<std::size_t> open;  // indexes into phases still waiting for their end
  constexpr std::string_view kStart = ":start";
  constexpr std::string_view kEnd = ":end";
  for (const auto& mark : marks) {
    const std::string_view name = mark.name;
    if (name.size() > kStart.size() && name.ends_with(kStart)) {
      Phase p;
      p.name = std::string(name.substr(0, name.size() - kStart.size()));
      p.start = mark.t;
      p.end = trace_end;
      p.start_fields = mark.fields;
      open.push_back(phases.size());
      phases.push_back(std::move(p));
    } else if (name.size() > kEnd.size() && name.ends_with(kEnd)) {
      const auto base = name.substr(0, name.size() - kEnd.size());
      // Close the most recent open phase of that name (phases may nest).
      for (auto it = open.rbegin(); it != open.rend(); ++it) {
        if (phases[*it].name == base) {
          phases[*it].end = mark.t;
          phases[*it].end_fields = mark.fields;
          open.erase(std::next(it).base());
          break;
        }
      }
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

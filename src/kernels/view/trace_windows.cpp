// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/trace_windows.hpp"

#include <algorithm>
#include <limits>

#include "core/intervals.hpp"

namespace gpulens::kernels {

Spans windows_as_seen(const Spans& opened, const Spans& busy) {
  Spans seen;
  auto it = busy.begin();
  for (std::size_t i = 0; i < opened.size(); ++i) {
    const auto [open, close] = opened[i];
    const double next_open =
        i + 1 < opened.size() ? opened[i + 1].first : std::numeric_limits<double>::infinity();
    // Work recorded in this window starts after it opened and before the next one:
    // nothing is recorded between windows.
    double last_end = -std::numeric_limits<double>::infinity();
    while (it != busy.end() && it->first < open) ++it;
    for (; it != busy.end() && it->first < next_open; ++it)
      last_end = std::max(last_end, it->second);
    const double queue = std::max(0.0, last_end - close);
    seen.emplace_back(open + queue, close + queue);
  }
  merge_intervals(seen);
  return seen;
}

IdleStats idle_over_spans(const Spans& busy, const Spans& spans, const HiddenIdles* hidden) {
  IdleStats total;
  for (const auto& [from, to] : spans) {
    const IdleStats one = idle_over(busy, from, to, hidden);
    total.window_s += one.window_s;
    total.busy_s += one.busy_s;
    for (std::size_t i = 0; i < total.gaps.count.size(); ++i) {
      total.gaps.count[i] += one.gaps.count[i];
      total.gaps.seconds[i] += one.gaps.seconds[i];
    }
  }
  total.idle_share = total.window_s > 0 ? 1 - total.busy_s / total.window_s : 0;
  return total;
}

std::vector<std::pair<std::size_t, std::size_t>> step_runs_inside(const std::vector<double>& steps,
                                                                  const Spans& spans) {
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  auto span_of = [&](double t) -> const std::pair<double, double>* {
    auto it = std::upper_bound(spans.begin(), spans.end(), t,
                               [](double x, const auto& s) { return x < s.first; });
    if (it == spans.begin()) return nullptr;
    --it;
    return t <= it->second ? &*it : nullptr;
  };
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    const auto* a = span_of(steps[i]);
    if (a == nullptr || a != span_of(steps[i + 1])) continue;  // not whole inside one window
    if (!runs.empty() && runs.back().second == i) {
      runs.back().second = i + 1;
    } else {
      runs.emplace_back(i, i + 1);
    }
  }
  return runs;
}

}  // namespace gpulens::kernels

// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/device_steps.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpulens::kernels {
namespace {

using Runs = std::vector<std::pair<std::size_t, std::size_t>>;

// What was traced of the device: its windows as the GPU saw them, or the whole
// job from the first to the last GPU work.
Spans traced_spans(const Spans& busy, const Spans* opened) {
  if (opened != nullptr) return windows_as_seen(*opened, busy);
  if (!busy.empty()) return {{busy.front().first, busy.back().second}};
  return {};
}

// Runs of consecutive marked steps the per-step figures are taken over: those
// whole inside one window when traced in windows, else all of them.
Runs step_runs(const std::vector<double>& steps, const Spans& traced, bool windowed) {
  if (steps.size() < 2) return {};
  if (windowed) return step_runs_inside(steps, traced);
  return {{0, steps.size() - 1}};
}

StepStats step_stats(const Spans& busy, const HiddenIdles* hidden, const SyncSpans& syncs,
                     const Spans& run_spans, std::size_t steps) {
  StepStats st;
  st.steps = steps;
  st.idle = idle_over_spans(busy, run_spans, hidden);
  st.mean_step_s = st.idle.window_s / static_cast<double>(st.steps);
  st.mean_idle_per_step_s = (st.idle.window_s - st.idle.busy_s) / static_cast<double>(st.steps);
  // Both sorted (syncs by start, runs disjoint): one sweep.
  double n = 0;
  double blocked = 0;
  auto run = run_spans.begin();
  for (const auto& s : syncs) {
    while (run != run_spans.end() && run->second <= s.from) ++run;
    if (run == run_spans.end()) break;
    if (s.from >= run->first) n += s.count, blocked += s.blocked_s;
  }
  st.syncs_per_step = n / static_cast<double>(st.steps);
  st.sync_s_per_step = blocked / static_cast<double>(st.steps);
  return st;
}

// Strips: the steps of the runs whose length is nearest the median, in time order.
std::vector<DeviceView::Strip> median_strips(const Spans& busy, const std::vector<double>& steps,
                                             const Runs& runs, double origin_s, std::size_t count) {
  std::vector<std::size_t> idx;
  for (const auto& [first, last] : runs) {
    for (std::size_t i = first; i < last; ++i) idx.push_back(i);
  }
  std::vector<double> lens(steps.size() - 1);
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) lens[i] = steps[i + 1] - steps[i];
  std::vector<double> sorted;
  for (std::size_t i : idx) sorted.push_back(lens[i]);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2),
                   sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return std::abs(lens[a] - median) < std::abs(lens[b] - median);
  });
  idx.resize(std::min(idx.size(), count));
  std::sort(idx.begin(), idx.end());
  std::vector<DeviceView::Strip> strips;
  for (std::size_t i : idx) {
    DeviceView::Strip strip;
    strip.start_unix = steps[i] + origin_s;
    strip.length_s = lens[i];
    auto it = std::lower_bound(busy.begin(), busy.end(), std::make_pair(steps[i], steps[i]),
                               [](const auto& a, const auto& b) { return a.second < b.first; });
    for (; it != busy.end() && it->first < steps[i + 1] && strip.busy.size() < 4000; ++it) {
      strip.busy.emplace_back(std::max(it->first, steps[i]) - steps[i],
                              std::min(it->second, steps[i + 1]) - steps[i]);
    }
    strips.push_back(std::move(strip));
  }
  return strips;
}

}  // namespace

DeviceSteps device_steps(const DeviceInputs& in) {
  const Spans& busy = *in.busy;
  const std::vector<double>& steps = *in.steps;
  DeviceSteps out;
  out.view.device = in.device;
  out.view.name = in.name;
  const Spans spans = traced_spans(busy, in.opened);
  if (in.opened != nullptr) out.traced = spans;
  out.view.activity = idle_over_spans(busy, spans, in.hidden);
  out.attribution = spans;
  const Runs runs = step_runs(steps, spans, in.opened != nullptr);
  out.no_step_inside_windows = in.opened != nullptr && steps.size() >= 2 && runs.empty();
  if (runs.empty()) return out;
  Spans run_spans;
  std::size_t marked = 0;
  for (const auto& [first, last] : runs) {
    marked += last - first;
    run_spans.emplace_back(steps[first], steps[last]);
  }
  out.view.steps = step_stats(busy, in.hidden, *in.syncs, run_spans, marked);
  out.view.strips = median_strips(busy, steps, runs, in.origin_s, in.strips);
  out.attribution = std::move(run_spans);
  return out;
}

}  // namespace gpulens::kernels

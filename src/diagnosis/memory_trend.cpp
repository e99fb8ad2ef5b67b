// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/memory_trend.hpp"

#include <algorithm>
#include <cmath>

namespace gpulens::diagnosis {

MemoryTrend analyze_memory_trend(const std::deque<MemoryPoint>& points,
                                 std::optional<double> total_mib, const MemoryTrendSettings& s) {
  MemoryTrend tr;
  if (points.size() < 3) {
    tr.why_not = "too little history";
    return tr;
  }
  tr.current_mib = points.back().mib;
  double low = points.front().mib, high = points.front().mib;
  for (const auto& p : points) {
    low = std::min(low, p.mib);
    high = std::max(high, p.mib);
  }
  // The growth is judged from its onset (the last point at the floor), so a
  // leak that starts after a long flat stretch, or after other processes came
  // and went, is seen without waiting for it to outweigh that history.
  const double floor_tolerance = std::max(64.0, 0.01 * (high - low));
  std::size_t onset = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].mib <= low + floor_tolerance) onset = i;
  }
  if (points.size() - onset < 3) onset = 0;
  double prior_peak = 0;  // how high memory stood before the onset, above the floor
  for (std::size_t i = 0; i < onset; ++i) prior_peak = std::max(prior_peak, points[i].mib - low);

  const auto first = points.begin() + static_cast<std::ptrdiff_t>(onset);
  const auto n = static_cast<double>(points.end() - first);
  tr.span_s = points.back().t - first->t;
  double mt = 0, mv = 0;
  for (auto p = first; p != points.end(); ++p) {
    mt += p->t;
    mv += p->mib;
  }
  mt /= n;
  mv /= n;
  double stt = 0, stv = 0, svv = 0, rises = 0, total_rise = 0, largest_rise = 0;
  double peak = first->mib, drawdown = 0;
  for (auto p = first; p != points.end(); ++p) {
    stt += (p->t - mt) * (p->t - mt);
    stv += (p->t - mt) * (p->mib - mv);
    svv += (p->mib - mv) * (p->mib - mv);
    if (p != first) {
      const double d = p->mib - std::prev(p)->mib;
      if (d > 0) {
        rises += 1;
        total_rise += d;
        largest_rise = std::max(largest_rise, d);
      }
    }
    peak = std::max(peak, p->mib);
    drawdown = std::max(drawdown, peak - p->mib);
  }
  tr.slope_mib_s = stt > 0 ? stv / stt : 0.0;
  tr.r2 = (stt > 0 && svv > 0) ? (stv * stv) / (stt * svv) : 0.0;
  tr.growth_mib = tr.slope_mib_s * tr.span_s;
  tr.rising_share = rises / (n - 1);
  tr.step_share = total_rise > 0 ? largest_rise / total_rise : 1.0;
  tr.drawdown_share = total_rise > 0 ? drawdown / total_rise : 1.0;
  tr.prior_peak_share = tr.growth_mib > 0 ? prior_peak / tr.growth_mib : 1.0;
  if (total_mib && tr.slope_mib_s > 0) {
    tr.time_to_oom_s = std::max(0.0, *total_mib - tr.current_mib) / tr.slope_mib_s;
  }

  if (tr.span_s < s.min_span_s) {
    tr.why_not = "history shorter than the minimum span";
  } else if (tr.slope_mib_s <= 0 || tr.growth_mib < s.min_growth_mib) {
    tr.why_not = "memory is not rising by a meaningful amount";
  } else if (tr.r2 < s.min_r2) {
    tr.why_not = "the rise does not follow a line";
  } else if (tr.rising_share < s.min_rising_share) {
    tr.why_not = "memory rose in few of the intervals";
  } else if (tr.step_share > s.max_step_share) {
    tr.why_not = "the rise is one step (a one-time allocation)";
  } else if (tr.drawdown_share > s.max_drawdown_share) {
    tr.why_not = "memory falls back while rising (a saw-tooth)";
  } else if (tr.prior_peak_share > s.max_prior_peak_share) {
    tr.why_not = "memory stood as high before and fell back (a saw-tooth)";
  } else if (tr.time_to_oom_s && *tr.time_to_oom_s > s.max_time_to_oom_s) {
    tr.why_not = "out of memory is too far away to matter";
  } else {
    tr.growing = true;
  }
  return tr;
}

MemoryTrend analyze_fast_memory_trend(const std::deque<MemoryPoint>& recent,
                                      std::optional<double> total_mib,
                                      const MemoryTrendSettings& s) {
  MemoryTrendSettings fast = s;
  fast.min_span_s = s.fast_min_span_s;
  // A leak of a few GiB a step is a staircase: at 0.1 s readings, half the
  // seconds may be flat. The fit, the single-step share and "still rising" hold it.
  fast.min_rising_share = s.min_rising_share / 2;
  MemoryTrend tr = analyze_memory_trend(recent, total_mib, fast);
  tr.fast = true;
  if (!tr.growing) return tr;
  tr.growing = false;
  if (!total_mib || !tr.time_to_oom_s) {
    tr.why_not = "device memory size unknown: no fast forecast";
  } else if (recent.size() < 2 || recent.back().mib <= recent[recent.size() - 2].mib) {
    tr.why_not = "memory stopped rising";
  } else if (*tr.time_to_oom_s > s.fast_horizon_factor * tr.span_s) {
    tr.why_not = "at this rate the device does not fill soon";
  } else {
    tr.growing = true;
  }
  return tr;
}

bool MemoryTrendTracker::add_peak(std::deque<MemoryPoint>& points, std::optional<double>& start,
                                  double bucket_s, double lookback_s, double t, double mib) {
  if (!points.empty() && t < points.back().t) points.clear();  // time went back: restart
  bool closed = false;
  if (!start || t - *start >= bucket_s || points.empty()) {
    closed = !points.empty();
    start = t;
    points.push_back({t, mib});
  } else {
    // The bucket keeps its peak: the peaks are what runs out of memory.
    points.back().mib = std::max(points.back().mib, mib);
    points.back().t = t;
  }
  while (points.size() > 2 && points.back().t - points.front().t > lookback_s) {
    points.pop_front();
  }
  return closed;
}

bool MemoryTrendTracker::add(double t, double mib) {
  const bool closed =
      add_peak(points_, bucket_start_, settings_.bucket_s, settings_.lookback_s, t, mib);
  add_peak(recent_, recent_start_, settings_.fast_min_span_s / 3, settings_.min_span_s, t, mib);
  rising_ = false;
  if (recent_.size() >= 3 && settings_.fast_min_span_s > 0) {
    const double newest = recent_.back().mib;
    rising_ = newest > recent_[recent_.size() - 2].mib;
    for (const auto& p : recent_) rising_ = rising_ && p.mib <= newest;
  }
  return closed || rising_;
}

MemoryTrend MemoryTrendTracker::analyze(std::optional<double> total_mib) const {
  MemoryTrend slow = analyze_memory_trend(points_, total_mib, settings_);
  if (slow.growing || !rising_) return slow;
  MemoryTrend fast = analyze_fast_memory_trend(recent_, total_mib, settings_);
  return fast.growing ? fast : slow;
}

}  // namespace gpulens::diagnosis

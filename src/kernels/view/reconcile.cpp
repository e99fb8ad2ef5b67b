// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/reconcile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_units.hpp"

namespace gpulens::kernels {
namespace {

// Counters over [a, b]: kernel-active seconds, and how much of [a, b] the ticks cover.
struct Active {
  double active_s = 0, covered_s = 0;
};

Active active_over(const std::vector<CounterTick>& ticks, double a, double b) {
  Active out;
  if (!(b > a)) return out;
  auto it = std::lower_bound(ticks.begin(), ticks.end(), a,
                             [](const CounterTick& t, double x) { return t.to <= x; });
  for (; it != ticks.end() && it->from < b; ++it) {
    const double overlap = std::min(it->to, b) - std::max(it->from, a);
    if (!(overlap > 0)) continue;
    out.covered_s += overlap;
    out.active_s += overlap * it->active;
  }
  return out;
}

// The windows cut to [a, b].
Spans windows_within(const Spans& windows, double a, double b) {
  Spans out;
  auto it = std::lower_bound(windows.begin(), windows.end(), a,
                             [](const auto& w, double x) { return w.second <= x; });
  for (; it != windows.end() && it->first < b; ++it) {
    const double s = std::max(it->first, a), e = std::min(it->second, b);
    if (e > s) out.emplace_back(s, e);
  }
  return out;
}

SpanCheck check_span(const ReconcileInputs& in, std::string name, double from, double to) {
  SpanCheck c;
  c.name = std::move(name);
  c.from = from;
  c.to = to;
  const Active all = active_over(*in.ticks, from, to);
  c.counters_active_s = all.active_s;
  c.counters_share = all.covered_s > 0 ? all.active_s / all.covered_s : 0;
  const Spans inside = windows_within(*in.windows, from, to);
  double active_inside = 0;
  for (const auto& [a, b] : inside) {
    c.windows_s += b - a;
    active_inside += active_over(*in.ticks, a, b).active_s;
  }
  if (c.windows_s > 0 && in.busy != nullptr) {
    const IdleStats st = idle_over_spans(*in.busy, inside, in.hidden);
    c.windows_share = st.window_s > 0 ? std::clamp(st.busy_s / st.window_s, 0.0, 1.0) : 0.0;
  }
  // With no kernel time in the counters, coverage is the windows' share of the time.
  c.coverage = all.active_s > 0    ? std::min(1.0, active_inside / all.active_s)
               : all.covered_s > 0 ? std::min(1.0, c.windows_s / all.covered_s)
                                   : 0;
  return c;
}

}  // namespace

bool SpanCheck::shares_differ() const {
  return windows_share && std::abs(*windows_share - counters_share) > kMaxShareGap;
}

std::vector<CounterTick> counter_ticks(const std::vector<gpulens::Sample>& samples, int gpu,
                                       std::optional<double> interval_s, double origin_s) {
  std::vector<CounterTick> out;
  std::optional<double> previous;
  for (const auto& s : samples) {
    if (s.gpu != gpu) continue;
    const double t = s.t - origin_s;
    const std::optional<double> from =
        previous ? previous
                 : (interval_s && *interval_s > 0 ? std::optional<double>(t - *interval_s)
                                                  : std::nullopt);
    previous = t;
    const auto util = s.get(Metric::GpuUtil);
    if (!from || !util || !(t > *from) || !std::isfinite(*util)) continue;
    out.push_back({*from, t, std::clamp(*util / 100.0, 0.0, 1.0)});
  }
  return out;
}

std::optional<Reconciliation> reconcile(const ReconcileInputs& in) {
  if (in.ticks == nullptr || in.ticks->empty() || in.windows == nullptr) return std::nullopt;
  const auto& ticks = *in.ticks;
  // The job: from its first kernel (the counters' first kernel-active tick, or
  // the first work the windows saw, whichever is earlier) to the last tick.
  double from = ticks.front().from;
  const auto first_active =
      std::find_if(ticks.begin(), ticks.end(), [](const CounterTick& t) { return t.active > 0; });
  if (first_active != ticks.end()) from = first_active->from;
  if (in.busy != nullptr && !in.busy->empty()) {
    from = std::max(ticks.front().from, std::min(from, in.busy->front().first));
  }
  const double to = ticks.back().to;
  if (!(to > from)) return std::nullopt;
  Reconciliation r;
  r.job = check_span(in, "", from, to);
  if (in.phases != nullptr) {
    for (const auto& p : *in.phases) {
      const double a = std::max(p.from, ticks.front().from), b = std::min(p.to, to);
      if (!(b > a)) continue;
      SpanCheck c = check_span(in, p.name, a, b);
      if (c.counters_active_s > 0 || c.windows_s > 0) r.phases.push_back(std::move(c));
    }
  }
  return r;
}

std::string reconcile_clause(const SpanCheck& job, bool steps) {
  if (!job.flagged()) return {};
  const std::string whole =
      fmt::format("over the whole job the counters saw kernels running {} of the time",
                  share_text(job.counters_share));
  const std::string so = job.shares_differ()
                             ? ", so the windows' figures do not stand for the whole job"
                             : ", near the windows' figure";
  if (steps) {
    return fmt::format(
        "; the trace windows (busy {}) cover {} of the job's kernel-active time, "
        "and {}{}",
        share_text(job.windows_share.value_or(0)), share_text(job.coverage), whole, so);
  }
  return fmt::format(", which cover {} of the job's kernel-active time; {}{}",
                     share_text(job.coverage), whole, so);
}

bool any_flagged(const std::vector<Reconciliation>& all) {
  for (const auto& r : all) {
    if (r.job.flagged()) return true;
  }
  return false;
}

std::string job_sentence(const Reconciliation& r) {
  const SpanCheck& j = r.job;
  return fmt::format(
      "GPU {}: the trace windows ({}) hold {} of the job's kernel-active time; busy {} inside "
      "them, against {} by the counters over the job ({} from its first kernel){}",
      r.gpu, kernel_time_text(j.windows_s), share_text(j.coverage),
      share_text(j.windows_share.value_or(0)), share_text(j.counters_share),
      kernel_time_text(j.to - j.from),
      j.shares_differ()  ? ": the windows do not stand for the job"
      : j.low_coverage() ? ": few windows, but they read as the job"
                         : "");
}

std::string phase_sentence(const SpanCheck& p) {
  const std::string counters =
      fmt::format("the counters saw kernels running {} of it", share_text(p.counters_share));
  if (!p.windows_share) {
    return fmt::format("phase `{}` ({}): no trace window fell in it; {}", p.name,
                       kernel_time_text(p.to - p.from), counters);
  }
  return fmt::format(
      "phase `{}` ({}): busy {} of its trace windows, which cover {} of its kernel-active time; "
      "{}{}",
      p.name, kernel_time_text(p.to - p.from), share_text(*p.windows_share), share_text(p.coverage),
      counters, p.shares_differ() ? ": the windows do not stand for it" : "");
}

}  // namespace gpulens::kernels

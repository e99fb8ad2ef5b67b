// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <list>
#include <map>
#include <memory>

#include "core/clock_reasons.hpp"
#include "core/phase.hpp"
#include "diagnosis/efficiency.hpp"
#include "diagnosis/fixes.hpp"

namespace gpulens::diagnosis {

namespace {

struct Snapshot {
  StateFinding finding;
  WindowStats window;
};

class MeanAccumulator {
 public:
  void add(const MetricValues& v) {
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      if (const auto x = v.get(static_cast<Metric>(m))) {
        sum_[m] += *x;
        ++n_[m];
      }
    }
  }
  MetricValues means() const {
    MetricValues out;
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      if (n_[m] > 0) out.set(static_cast<Metric>(m), sum_[m] / n_[m]);
    }
    return out;
  }
  // What was added since `before` (an earlier copy of this accumulator).
  MeanAccumulator since(const MeanAccumulator& before) const {
    MeanAccumulator out;
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      out.sum_[m] = sum_[m] - before.sum_[m];
      out.n_[m] = n_[m] - before.n_[m];
    }
    return out;
  }

 private:
  std::array<double, kMetricCount> sum_{};
  std::array<double, kMetricCount> n_{};
};

// A window made only of samples after `from` and covering a full window's time.
bool settled(const WindowStats& w, double from, double full_s) {
  return w.start >= from && w.covered_s >= 0.8 * full_s;
}

// Running totals of one GPU: state times, throttling and metric sums. A phase's
// totals are the difference between these at its end and at its start, so an
// open phase costs nothing per sample here however many are open.
struct Totals {
  StateShares shares;
  double throttled_s = 0;
  std::array<std::uint64_t, 64> reason_samples{};  // throttled samples with each reason bit
  MeanAccumulator means;

  void add(const GpuStatus& st, const Sample& sample, double dt) {
    shares.add(st.state.state, dt);
    if (st.throttle.throttled) {
      throttled_s += dt;
      for (std::uint64_t r = st.throttle.reasons; r != 0; r &= r - 1) {
        ++reason_samples[static_cast<std::size_t>(std::countr_zero(r))];
      }
    }
    means.add(sample.values);
  }
  Totals since(const Totals& before) const {
    Totals out;
    for (std::size_t i = 0; i < kGpuStateCount; ++i) {
      out.shares.seconds[i] = shares.seconds[i] - before.shares.seconds[i];
    }
    out.throttled_s = throttled_s - before.throttled_s;
    for (std::size_t b = 0; b < reason_samples.size(); ++b) {
      out.reason_samples[b] = reason_samples[b] - before.reason_samples[b];
    }
    out.means = means.since(before.means);
    return out;
  }
  std::uint64_t reasons() const {
    std::uint64_t out = 0;
    for (std::size_t b = 0; b < reason_samples.size(); ++b) {
      if (reason_samples[b] > 0) out |= std::uint64_t{1} << b;
    }
    return out;
  }
};

// The snapshot of one sample, made at most once however many phases keep it.
class SharedSnapshot {
 public:
  explicit SharedSnapshot(const GpuStatus& st) : st_(st) {}
  std::shared_ptr<const Snapshot> get() {
    if (!made_) made_ = std::make_shared<const Snapshot>(Snapshot{st_.state, st_.window});
    return made_;
  }

 private:
  const GpuStatus& st_;
  std::shared_ptr<const Snapshot> made_;
};

// A representative finding per state for words and fixes, of a phase or the
// whole recording on one GPU: one whose window is full and holds only this
// phase's samples (a window just reset at a mark holds a sample or two of the
// transition), the clearest of those (highest confidence), taken at most once a second.
struct Representatives {
  std::array<std::shared_ptr<const Snapshot>, kGpuStateCount> last;
  std::array<double, kGpuStateCount> last_t{};
  std::array<bool, kGpuStateCount> last_inside{};

  // `from`: where the phase began; windows reaching back before it mix in
  // another phase's samples. `full_s`: the time a full window covers.
  void add(const GpuStatus& st, double t, SharedSnapshot& snap, double from, double full_s) {
    const auto i = state_index(st.state.state);
    const bool inside = settled(st.window, from, full_s);
    if (!last[i] || (inside && !last_inside[i]) ||
        (inside == last_inside[i] && st.state.confidence > last[i]->finding.confidence &&
         t - last_t[i] >= 1.0)) {
      last[i] = snap.get();
      last_t[i] = t;
      last_inside[i] = inside;
    }
  }
};

// One GPU in an open phase: its running totals when the phase began for it.
struct PhaseGpu {
  Totals at_start;
  Representatives reps;
};

struct OpenPhase {
  std::string name;
  double start = 0;
  nlohmann::json start_fields;
  std::map<int, PhaseGpu> gpus;
};

struct Run {
  TimelineRun run;
  double conf_sum = 0;
  double time = 0;
  double throttled_s = 0;
  std::uint64_t reasons = 0;
  std::optional<Snapshot> last;
  bool last_inside = false;  // `last`'s window holds only this run's samples
};

ThrottleFinding throttle_of(std::uint64_t reasons) {
  ThrottleFinding t;
  t.throttled = true;
  t.reasons = reasons;
  t.cause = clock_reasons_text(reasons);
  return t;
}

// A critical alert that fired during at least this share of a phase or run
// leads its fixes: a hang or a lost GPU matters more than any tuning.
constexpr double kCriticalOverlapMin = 0.25;

}  // namespace

struct ReportBuilder::Impl {
  Impl(const TraceHeader& h, DiagnosisConfig config, std::vector<std::vector<int>> groups)
      : engine(h, std::move(config), std::move(groups)), header(h) {
    const double interval = h.interval_s.value_or(0);
    typical_dt = interval > 0 ? interval : 1.0;
    max_dt = interval > 0 ? 3 * interval : engine.config().window.length_s;
  }

  DiagnosisEngine engine;
  TraceHeader header;
  double typical_dt;
  double max_dt;
  std::map<int, double> last_t;
  std::map<int, Run> runs;
  std::vector<TimelineRun> timeline;
  // The phases summarised and still open, in the order they began; the stacks pair
  // each end mark with its start, nullopt for a phase past kMaxPhases.
  std::list<OpenPhase> open;
  OpenPhaseStacks<std::optional<std::list<OpenPhase>::iterator>> open_by_name;
  std::size_t phases_seen = 0;
  std::vector<PhaseSummary> phases;
  std::map<int, Totals> whole;
  std::vector<AlertRecord> alerts;
  std::vector<AlertEvent> recent;
  std::optional<double> start, end;
  std::vector<std::string> notes;

  void add(const Tick& tick) {
    for (const auto& m : tick.marks) handle_mark(m);
    engine.on_tick(tick);
    recent = engine.take_events();
    for (const auto& e : recent) record(e);
    for (const auto& s : tick.samples) {
      if (s.values.empty()) continue;
      const GpuStatus& st = engine.status(s.gpu);
      const auto prev = last_t.find(s.gpu);
      double dt = prev == last_t.end() ? typical_dt : s.t - prev->second;
      dt = std::clamp(dt, 0.0, max_dt);
      last_t[s.gpu] = s.t;
      if (!start) start = s.t - dt;
      end = s.t;
      const double full_s = engine.config().window.length_s;
      Totals& totals = whole[s.gpu];
      SharedSnapshot snap(st);
      for (auto& p : open) {
        auto [it, began] = p.gpus.try_emplace(s.gpu);
        if (began) it->second.at_start = totals;
        it->second.reps.add(st, s.t, snap, p.start, full_s);
      }
      totals.add(st, s, dt);
      extend_run(st, s.t, dt);
    }
  }

  void handle_mark(const Mark& m) {
    const auto pm = phase_mark(m.name);
    if (!pm) return;
    if (pm->start) {
      ++phases_seen;
      if (phases_seen > kMaxPhases) {
        open_by_name.push(pm->name, std::nullopt);
        return;
      }
      open.push_back({std::string(pm->name), m.t, m.fields, {}});
      open_by_name.push(pm->name, std::prev(open.end()));
    } else if (const auto found = open_by_name.pop(pm->name)) {
      if (!*found) return;  // a phase past kMaxPhases ends
      const auto it = **found;
      close_phase(*it, m.t, m.fields);
      open.erase(it);
    }
  }

  void close_phase(const OpenPhase& p, double t_end, const nlohmann::json& end_fields) {
    for (const auto& [gpu, acc] : p.gpus) {
      const Totals in_phase = whole[gpu].since(acc.at_start);
      const double total = in_phase.shares.total();
      if (total <= 0) continue;
      PhaseSummary ps;
      ps.name = p.name;
      ps.gpu = gpu;
      ps.start = p.start;
      ps.end = t_end;
      ps.shares = in_phase.shares;
      ps.state = in_phase.shares.majority();
      ps.throttled_share = in_phase.throttled_s / total;
      const bool throttled = ps.throttled_share >= 0.5;
      if (throttled) {
        ps.flags.push_back("throttled");
        ps.throttle_cause = clock_reasons_text(in_phase.reasons());
      }
      ps.means = in_phase.means.means();
      ps.efficiency = efficiency_score(ps.means);
      ps.fixes = critical_fixes(gpu, p.start, t_end);
      if (const auto& snap = acc.reps.last[state_index(ps.state)]) {
        ps.summary = describe_state(snap->finding, engine.limits(gpu));
        if (!hang_covers(gpu, p.start, t_end)) {
          append_unique(ps.fixes, fixes_for_state(snap->finding, snap->window, engine.limits(gpu),
                                                  engine.fix_context()));
        }
      }
      if (throttled) append_unique(ps.fixes, fixes_for_throttle(throttle_of(in_phase.reasons())));
      ps.fields = p.start_fields.is_object() ? p.start_fields : nlohmann::json::object();
      if (end_fields.is_object()) {
        for (auto it = end_fields.begin(); it != end_fields.end(); ++it) ps.fields[it.key()] = *it;
      }
      phases.push_back(std::move(ps));
    }
  }

  // Fixes of the critical alerts on `gpu` whose condition held during at least
  // kCriticalOverlapMin of [from_t, to_t] (from the condition's start, `since`).
  std::vector<std::string> critical_fixes(int gpu, double from_t, double to_t) const {
    std::vector<std::string> out;
    const double span = to_t - from_t;
    if (span <= 0) return out;
    for (const auto& a : alerts) {
      if (a.gpu != gpu || a.severity != Severity::Critical) continue;
      const double from = std::max(from_t, a.since);
      const double to = std::min(to_t, a.resolved_at.value_or(to_t));
      if (to - from >= kCriticalOverlapMin * span) append_unique(out, a.fixes);
    }
    return out;
  }

  // A hang (the stalled alert) over kCriticalOverlapMin of [from_t, to_t]: the
  // state's tuning advice (more blocks, a larger batch) would tune a kernel that
  // waits for something that never comes, so the hang's fixes stand alone.
  bool hang_covers(int gpu, double from_t, double to_t) const {
    const double span = to_t - from_t;
    if (span <= 0) return false;
    return std::any_of(alerts.begin(), alerts.end(), [&](const AlertRecord& a) {
      if (a.gpu != gpu || a.rule != "stalled") return false;
      const double from = std::max(from_t, a.since);
      const double to = std::min(to_t, a.resolved_at.value_or(to_t));
      return to - from >= kCriticalOverlapMin * span;
    });
  }

  void extend_run(const GpuStatus& st, double t, double dt) {
    Run& r = runs[st.gpu];
    const bool same = r.last && r.run.state == st.state.state;
    if (!same) {
      if (r.last) close_run(r);
      r = Run{};
      r.run.gpu = st.gpu;
      r.run.start = t - dt;
      r.run.state = st.state.state;
    }
    r.run.end = t;
    r.time += dt;
    r.conf_sum += st.state.confidence * dt;
    if (st.throttle.throttled) {
      r.throttled_s += dt;
      r.reasons |= st.throttle.reasons;
    }
    // The run is described by its clearest window among the full ones made only
    // of its own samples: a window reaching back into the run before describes a mix.
    const bool inside = settled(st.window, r.run.start, engine.config().window.length_s);
    if (!r.last || (inside && !r.last_inside) ||
        (inside == r.last_inside && st.state.confidence > r.last->finding.confidence)) {
      r.last = Snapshot{st.state, st.window};
      r.last_inside = inside;
    }
  }

  void close_run(Run& r) {
    TimelineRun out = std::move(r.run);
    out.confidence = r.time > 0 ? r.conf_sum / r.time : 0;
    out.throttled_share = r.time > 0 ? r.throttled_s / r.time : 0;
    const HardwareLimits& hw = engine.limits(out.gpu);
    out.summary = describe_state(r.last->finding, hw);
    out.evidence = r.last->finding.evidence;
    out.cannot_tell = r.last->finding.cannot_tell;
    out.fixes = critical_fixes(out.gpu, out.start, out.end);
    if (!hang_covers(out.gpu, out.start, out.end)) {
      append_unique(out.fixes,
                    fixes_for_state(r.last->finding, r.last->window, hw, engine.fix_context()));
    }
    if (out.throttled_share >= 0.5) {
      out.throttle_cause = clock_reasons_text(r.reasons);
      append_unique(out.fixes, fixes_for_throttle(throttle_of(r.reasons)));
    }
    timeline.push_back(std::move(out));
    r.last.reset();
  }

  // Runs shorter than a second are the counters catching up at a transition:
  // fold them into the run before, then join neighbours of the same state.
  void fold_short_runs() {
    constexpr double kMinRun = 1.0;
    std::vector<TimelineRun> out;
    for (auto& run : timeline) {
      const bool continues = !out.empty() && out.back().gpu == run.gpu;
      if (continues && run.end - run.start < kMinRun) {
        out.back().end = run.end;
        continue;
      }
      if (continues && out.back().state == run.state) {
        TimelineRun& prev = out.back();
        const double a = prev.end - prev.start;
        const double b = run.end - run.start;
        const bool clearer = run.confidence > prev.confidence;
        if (a + b > 0) {
          prev.confidence = (prev.confidence * a + run.confidence * b) / (a + b);
          prev.throttled_share = (prev.throttled_share * a + run.throttled_share * b) / (a + b);
        }
        if (clearer) {
          prev.summary = std::move(run.summary);
          prev.evidence = std::move(run.evidence);
        }
        prev.end = run.end;
        continue;
      }
      out.push_back(std::move(run));
    }
    timeline = std::move(out);
  }

  void record(const AlertEvent& e) {
    if (e.kind == AlertEvent::Kind::Firing) {
      alerts.push_back({e.rule, e.gpu, e.severity, e.since, e.t, std::nullopt, e.message, e.count,
                        e.evidence, e.fixes});
      return;
    }
    for (auto it = alerts.rbegin(); it != alerts.rend(); ++it) {
      if (it->rule == e.rule && it->gpu == e.gpu && !it->resolved_at && it->message == e.message) {
        it->resolved_at = e.t;
        it->count = e.count;
        return;
      }
    }
  }

  DiagnosisReport finish() {
    for (auto& [gpu, r] : runs) {
      if (r.last) close_run(r);
    }
    const double t_end = end.value_or(0);
    while (!open.empty()) {
      close_phase(open.back(), std::max(t_end, open.back().start), nlohmann::json::object());
      open.pop_back();
    }
    if (phases_seen > kMaxPhases) {
      notes.push_back(
          fmt::format("{} phases in the recording; the first {} (by start) are summarised",
                      phases_seen, kMaxPhases));
    }
    DiagnosisReport rep;
    rep.host = header.host;
    rep.start = start;
    rep.end = end;
    rep.window_s = engine.config().window.length_s;
    for (int gpu : engine.gpus()) {
      GpuSummary g;
      g.gpu = gpu;
      g.limits = engine.limits(gpu);
      g.name = g.limits.name;
      if (const auto it = whole.find(gpu); it != whole.end()) {
        g.shares = it->second.shares;
        g.state = g.shares.majority();
        const double total = g.shares.total();
        g.throttled_share = total > 0 ? it->second.throttled_s / total : 0;
        g.means = it->second.means.means();
        g.efficiency = efficiency_score(g.means);
      }
      rep.gpus.push_back(std::move(g));
    }
    std::stable_sort(timeline.begin(), timeline.end(), [](const auto& a, const auto& b) {
      return a.gpu != b.gpu ? a.gpu < b.gpu : a.start < b.start;
    });
    fold_short_runs();
    std::stable_sort(phases.begin(), phases.end(), [](const auto& a, const auto& b) {
      return a.start != b.start ? a.start < b.start : a.gpu < b.gpu;
    });
    rep.timeline = std::move(timeline);
    rep.phases = std::move(phases);
    rep.alerts = std::move(alerts);
    rep.notes = std::move(notes);
    return rep;
  }
};

ReportBuilder::ReportBuilder(const TraceHeader& header, DiagnosisConfig config,
                             std::vector<std::vector<int>> job_groups)
    : impl_(std::make_unique<Impl>(header, std::move(config), std::move(job_groups))) {}
ReportBuilder::ReportBuilder(ReportBuilder&&) noexcept = default;
ReportBuilder& ReportBuilder::operator=(ReportBuilder&&) noexcept = default;
ReportBuilder::~ReportBuilder() = default;

void ReportBuilder::add(const Tick& tick) {
  impl_->add(tick);
}
const std::vector<AlertEvent>& ReportBuilder::recent_events() const {
  return impl_->recent;
}
void ReportBuilder::note(std::string text) {
  impl_->notes.push_back(std::move(text));
}
DiagnosisEngine& ReportBuilder::engine() {
  return impl_->engine;
}
DiagnosisReport ReportBuilder::finish() {
  return impl_->finish();
}

}  // namespace gpulens::diagnosis

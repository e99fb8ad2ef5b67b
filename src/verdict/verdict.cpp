// SPDX-License-Identifier: Apache-2.0
#include "verdict/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "core/phase.hpp"
#include "verdict/ranked_fixes.hpp"

namespace gpulens::verdict {
namespace {

std::vector<int> gpus_in(const Trace& trace) {
  std::set<int> seen;
  for (const auto& d : trace.header.devices) seen.insert(d.index);
  for (const auto& s : trace.samples) seen.insert(s.gpu);
  return {seen.begin(), seen.end()};
}

void choose_gpus(const Trace& trace, const VerdictOptions& o, Verdict& v, std::vector<int>& out) {
  const auto all = gpus_in(trace);
  const auto known = [&](int g) { return std::find(all.begin(), all.end(), g) != all.end(); };
  const auto pick = [&](const std::vector<int>& wanted) {
    for (int g : wanted) {
      if (known(g)) {
        if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
      } else {
        v.notes.push_back(fmt::format("GPU {} is not in the recording", g));
      }
    }
  };
  if (!o.gpus.empty()) {
    pick(o.gpus);
    v.gpus_basis = "--gpus";
  } else if (!v.job.gpus.empty()) {
    pick(v.job.gpus);
    v.gpus_basis = v.job.gpus_basis.empty() ? "the job's" : v.job.gpus_basis;
  } else {
    out = all;
    v.gpus_basis = "all";
  }
  for (int g : out) {
    if (const auto* d = trace.header.device(g)) {
      v.devices.push_back(*d);
    } else {
      DeviceInfo unnamed;
      unnamed.index = g;
      v.devices.push_back(unnamed);
    }
  }
}

// The price of one GPU-hour: given, or the table's figure for the job's model(s).
void resolve_price(const VerdictOptions& o, Verdict& v) {
  v.cost.currency = o.currency;
  if (o.price_per_gpu_hour) {
    v.cost.price_per_gpu_hour = o.price_per_gpu_hour;
    v.cost.price_source = o.price_source.empty() ? "--price" : o.price_source;
    return;
  }
  if (o.prices == nullptr || o.models == nullptr || v.devices.empty()) {
    if (o.prices == nullptr)
      v.notes.push_back("no price known: no price table loaded; pass --price");
    return;
  }
  double sum = 0;
  std::set<std::string> models;
  for (const auto& d : v.devices) {
    const GpuModel* m = o.models->find(d.name);
    const auto price = m != nullptr ? o.prices->price(m->model) : std::nullopt;
    if (!price) {
      v.notes.push_back(fmt::format("no price known for GPU {} ({}): pass --price", d.index,
                                    d.name.empty() ? "unnamed" : d.name));
      return;
    }
    sum += *price;
    models.insert(m->model);
  }
  v.cost.price_per_gpu_hour = sum / static_cast<double>(v.devices.size());
  v.cost.currency = o.prices->currency();
  std::string names;
  for (const auto& m : models) names += (names.empty() ? "" : ", ") + m;
  v.cost.price_source = o.prices->origin() + ": " + names;
}

Trace job_trace(const Trace& trace, const std::vector<int>& gpus, const Verdict& v) {
  Trace sub;
  sub.header = trace.header;
  sub.header.devices = v.devices;
  sub.marks = trace.marks;
  sub.warnings = trace.warnings;
  for (const auto& s : trace.samples) {
    if (std::find(gpus.begin(), gpus.end(), s.gpu) != gpus.end()) sub.samples.push_back(s);
  }
  return sub;
}

// The states as the timeline gives them, so that the states, the start-up and
// tear-down and the cost split are shares of the same seconds.
void collect_states(Verdict& v) {
  double throttled = 0;
  double diagnosed = 0;
  for (const auto& g : v.diagnosis.gpus) {
    throttled += g.throttled_share * g.shares.total();
    diagnosed += g.shares.total();
  }
  if (diagnosed > 0) v.throttled_share = throttled / diagnosed;
  const double total = v.steady.total_s;
  if (total <= 0) return;
  v.startup_share = v.steady.startup_s / total;
  v.teardown_share = v.steady.teardown_s / total;
  v.edges_share = v.startup_share + v.teardown_share;
  for (const auto s : diagnosis::all_states()) {
    const double secs = v.steady.steady.seconds[diagnosis::state_index(s)];
    if (secs <= 0) continue;
    // Diagnosed seconds stand for the paid hours in the same proportion.
    v.states.push_back({s, secs / total, secs / total * v.gpu_hours});
  }
  std::stable_sort(v.states.begin(), v.states.end(),
                   [](const StateShare& a, const StateShare& b) { return a.share > b.share; });
}

// "... while GPU 0 of the same job is busy": the peer the diagnosis named.
std::optional<int> peer_of(const diagnosis::TimelineRun& run) {
  static const std::string kKey = " of the same job";
  for (const std::string* text : {&run.summary}) {
    const auto at = text->find(kKey);
    if (at == std::string::npos) continue;
    const auto gpu = text->rfind("GPU ", at);
    if (gpu == std::string::npos) continue;
    try {
      return std::stoi(text->substr(gpu + 4, at - gpu - 4));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  for (const auto& e : run.evidence) {
    const auto at = e.note.find(kKey);
    if (e.note.starts_with("GPU ") && at != std::string::npos) {
      try {
        return std::stoi(e.note.substr(4, at - 4));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

const GpuUsage* usage_of(const std::vector<GpuUsage>& usage, int gpu) {
  for (const auto& u : usage) {
    if (u.gpu == gpu) return &u;
  }
  return nullptr;
}

// GPUs of the job that waited on another for a real share of the steady state.
void find_imbalance(Verdict& v) {
  if (v.devices.size() < 2) return;
  std::map<int, Imbalance> by_gpu;
  for (const auto& run : v.diagnosis.timeline) {
    if (run.state != diagnosis::GpuState::WaitingOnPeer ||
        v.steady.in_edges(run.gpu, run.start, run.end))
      continue;
    Imbalance& im = by_gpu[run.gpu];
    im.gpu = run.gpu;
    im.waiting_s += run.end - run.start;
    if (!im.peer) im.peer = peer_of(run);
  }
  for (auto& [gpu, im] : by_gpu) {
    const GpuSpan* span = v.steady.span(gpu);
    const double steady =
        span != nullptr && span->work_start ? *span->work_end - *span->work_start : v.duration_s;
    im.share = steady > 0 ? im.waiting_s / steady : 0;
    if (im.waiting_s < kImbalanceMinS || im.share < kImbalanceMinShare) continue;
    if (const auto* u = usage_of(v.steady_by_gpu, gpu)) im.sm_active = u->sm.ratio();
    if (im.peer) {
      if (const auto* u = usage_of(v.steady_by_gpu, *im.peer)) im.peer_sm_active = u->sm.ratio();
    }
    v.imbalance.push_back(im);
  }
  std::stable_sort(
      v.imbalance.begin(), v.imbalance.end(),
      [](const Imbalance& a, const Imbalance& b) { return a.waiting_s > b.waiting_s; });
}

// Tensor activity at the peak clock, over several windows and all the job's GPUs.
std::optional<double> estimate_over(const Trace& trace, const std::vector<int>& gpus,
                                    UsageOptions uo,
                                    const std::vector<std::pair<double, double>>& w,
                                    bool* corrected = nullptr) {
  Weighted sum;
  for (const auto& [from, to] : w) {
    uo.from = from;
    uo.to = to;
    const auto t = total_usage(measure_usage(trace, gpus, uo));
    sum += t.tensor_at_peak_clock;
    if (corrected != nullptr) *corrected = *corrected || t.clock_corrected;
  }
  return sum.ratio();
}

std::optional<ModelWork> work_in(const std::vector<Mark>& marks, const Phase& p,
                                 std::optional<double> default_flops) {
  if (auto w = work_from_steps(marks, default_flops, p.start, p.end)) return w;
  nlohmann::json fields = p.start_fields.is_object() ? p.start_fields : nlohmann::json::object();
  if (p.end_fields.is_object()) {
    for (auto it = p.end_fields.begin(); it != p.end_fields.end(); ++it) fields[it.key()] = *it;
  }
  return work_from_phase_fields(fields, p.start, p.end);
}

void build_phases(const Trace& trace, const std::vector<int>& gpus, const UsageOptions& uo,
                  const VerdictOptions& o, Verdict& v) {
  const double end = v.end.value_or(0);
  auto phases = find_phases(trace.marks, end);
  // The diagnosis summarised the first kMaxPhases and its note says so.
  if (phases.size() > kMaxPhases) phases.resize(kMaxPhases);
  // Each phase looks up its step marks and its diagnosis rows, not every mark and row.
  std::vector<Mark> steps;
  for (const auto& m : trace.marks) {
    if (m.name == kStepMark) steps.push_back(m);
  }
  std::multimap<std::string_view, const diagnosis::PhaseSummary*> diagnosed;
  for (const auto& d : v.diagnosis.phases) diagnosed.emplace(d.name, &d);
  for (const auto& p : phases) {
    PhaseRow row;
    row.name = p.name;
    row.start = p.start;
    row.end = p.end;
    const auto [from, to] = diagnosed.equal_range(p.name);
    for (auto it = from; it != to; ++it) {
      const diagnosis::PhaseSummary& d = *it->second;
      if (std::abs(d.start - p.start) > 1e-6) continue;
      PhaseGpu g{d.gpu, d.state, d.shares.share(d.state), d.flags, d.means, d.summary, d.fixes};
      row.gpus.push_back(std::move(g));
    }
    row.work = work_in(steps, p, o.flops_per_step);
    if (row.work) row.mfu = mfu_of(*row.work, v.mfu.peak);
    row.estimate = estimate_over(trace, gpus, uo, {{p.start, p.end}});
    v.phases.push_back(std::move(row));
  }
}

void build_mfu(const Trace& trace, const std::vector<int>& gpus, const UsageOptions& uo,
               const VerdictOptions& o, Verdict& v) {
  MfuSummary& m = v.mfu;
  m.estimate_job = v.total.tensor_at_peak_clock.ratio();
  m.estimate_clock_corrected = v.total.clock_corrected;
  std::vector<std::pair<double, double>> windows;
  if (auto w = work_from_steps(trace.marks, o.flops_per_step)) {
    windows.emplace_back(w->start, w->end);
    m.work = std::move(w);
  } else {
    // The reference recordings report work per phase: add the phases up.
    ModelWork sum;
    sum.source = "phase marks";
    for (const auto& row : v.phases) {
      if (!row.work || row.work->source != "phase marks") continue;
      if (sum.seconds == 0) sum.start = row.work->start;
      sum.end = std::max(sum.end, row.work->end);
      sum.flops += row.work->flops;
      sum.total_flops += row.work->total_flops;
      sum.seconds += row.work->seconds;
      sum.steps += row.work->steps;
      windows.emplace_back(row.start, row.end);
    }
    if (sum.seconds > 0) m.work = sum;
  }
  if (!m.work) {
    m.estimate = m.estimate_job;
    return;
  }
  m.model = mfu_of(*m.work, m.peak);
  if (m.peak.known() && v.duration_s > 0) {
    m.model_over_job = m.work->total_flops / v.duration_s / (m.peak.total_tflops * 1e12);
  }
  m.estimate = estimate_over(trace, gpus, uo, windows);
}

}  // namespace

Verdict build_verdict(const Trace& trace, const VerdictOptions& o) {
  Verdict v;
  v.job = job_from_marks(trace.marks);
  v.host = trace.header.host;
  std::vector<int> gpus;
  choose_gpus(trace, o, v, gpus);
  resolve_price(o, v);

  diagnosis::DiagnosisConfig config = o.diagnosis;
  if (!config.price_per_gpu_hour) config.price_per_gpu_hour = v.cost.price_per_gpu_hour;
  v.diagnosis = diagnosis::diagnose_trace(job_trace(trace, gpus, v), config, {gpus});

  UsageOptions uo;
  if (o.models != nullptr) {
    for (const auto& d : v.devices) {
      const GpuModel* m = o.models->find(d.name);
      if (m != nullptr && m->peak_clock_mhz) uo.peak_clock_mhz[d.index] = *m->peak_clock_mhz;
    }
  }
  v.usage = measure_usage(trace, gpus, uo);
  v.total = total_usage(v.usage);
  v.measured = v.total.covered_s > 0;
  if (v.measured) {
    v.start = v.total.first_t;
    v.end = v.total.last_t;
  } else {
    v.start = v.job.start;
    v.end = v.job.end;
    v.not_measured = !v.job.not_measured.empty() ? v.job.not_measured
                     : gpus.empty()              ? "the recording names no GPU"
                                                 : "the recording has no samples of the job's GPUs";
  }
  if (v.start && v.end) v.duration_s = std::max(0.0, *v.end - *v.start);
  if (v.measured) v.gpu_hours = v.duration_s * static_cast<double>(gpus.size()) / 3600.0;
  if (v.total.energy_j) {
    v.energy_kwh = *v.total.energy_j / 3.6e6;
    v.energy_basis = v.total.energy_basis;
  }
  v.funnel = build_funnel(v.total, v.gpu_hours);
  v.outcome = job_outcome(trace, v.job, gpus);
  v.steady = find_steady_state(v.diagnosis, o.edges_apart);
  if (v.steady.any_work()) {
    UsageOptions steady = uo;
    steady.from = *v.steady.start;
    steady.to = *v.steady.end;
    v.steady_by_gpu = measure_usage(trace, gpus, steady);
    v.steady_usage = total_usage(v.steady_by_gpu);
  }
  collect_states(v);
  find_imbalance(v);
  v.alerts = v.diagnosis.alerts;
  FixInputs fi;
  fi.end = v.diagnosis.end.value_or(0);
  fi.count = o.max_fixes;
  fi.steady = &v.steady;
  fi.outcome = &v.outcome;
  fi.job_gpus = v.devices.size();
  if (const auto t = v.steady_usage.tensor.ratio()) fi.steady_tensor_pct = *t * 100;
  if (o.collectives) fi.collectives = &*o.collectives;
  if (o.launches) fi.launches = &*o.launches;
  v.ranked_fixes = rank_fixes(v.diagnosis, fi);
  for (const auto& f : v.ranked_fixes) v.fixes.push_back(f.text);
  if (v.measured) {
    v.evidence_gaps = evidence_gaps(
        v.diagnosis, v.steady, {.window_s = config.window.length_s, .kernel_view = o.kernel_view});
  }
  const auto sm = v.funnel.step("sm_active");
  CostShares shares;
  shares.edges = v.edges_share;
  if (v.steady.total_s > 0) {
    shares.idle = 0;
    for (const auto& st : v.states) {
      if (!is_work_state(st.state) && st.state != diagnosis::GpuState::Unknown)
        *shares.idle += st.share;
    }
  }
  if (sm) shares.sm_active = sm->share;
  Cost cost = compute_cost(v.cost.price_per_gpu_hour, v.gpu_hours, v.duration_s, shares);
  cost.currency = v.cost.currency;
  cost.price_source = v.cost.price_source;
  v.cost = cost;
  if (v.measured) {
    if (!sm || !sm->share) {
      v.notes.push_back(
          "SM activity was not measured (GPM needs Hopper or newer): the funnel "
          "stops at kernel-active and inefficiency cannot be priced");
    }
    v.mfu.peak = resolve_peak(v.devices, o.models, o.dtype, o.peak_tflops);
    for (const auto& p : v.mfu.peak.problems) v.notes.push_back("MFU: " + p);
    build_phases(trace, gpus, uo, o, v);
    build_mfu(trace, gpus, uo, o, v);  // after the phases: the job's work may come from them
  }
  for (const auto& n : v.diagnosis.notes) v.notes.push_back(n);
  if (v.job.marks_skipped > 0) {
    v.notes.push_back(fmt::format(
        "{} line{} of the job's marks file skipped: not a mark (a JSON object with a string "
        "\"mark\")",
        v.job.marks_skipped, v.job.marks_skipped == 1 ? "" : "s"));
  }
  if (!v.job.marks_problem.empty())
    v.notes.push_back("the job's marks file: " + v.job.marks_problem);
  v.headline = build_headline(v);
  return v;
}

}  // namespace gpulens::verdict

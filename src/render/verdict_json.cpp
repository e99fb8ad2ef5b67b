// SPDX-License-Identifier: Apache-2.0
// The verdict as JSON: the stable, documented form (docs/report.md). Ratios are
// 0..1, times Unix seconds, durations seconds; an absent measurement is null,
// never 0. Values are rounded so that golden files do not flap in the last bit.
#include <cmath>

#include "core/json_number.hpp"
#include "render/verdict_output.hpp"

namespace gpulens::render {
namespace {

using ojson = nlohmann::ordered_json;

// Ratios to 0.01 %, hours and money to 6 decimals, times to ms (core/json_number.hpp).
ojson ratio(std::optional<double> x) {
  return json_number(x, decimals::kRatio);
}
ojson fine(std::optional<double> x) {
  return json_number(x, decimals::kFine);
}
ojson when(std::optional<double> x) {
  return json_number(x, decimals::kTime);
}
ojson text_or_null(const std::string& s) {
  return s.empty() ? ojson(nullptr) : ojson(s);
}

ojson job_json(const verdict::Verdict& v) {
  if (!v.job.present) return nullptr;
  const auto& j = v.job;
  ojson o;
  o["command"] = text_or_null(j.command);
  o["pid"] = j.pid ? ojson(*j.pid) : ojson(nullptr);
  o["exit_code"] = j.exit_code ? ojson(*j.exit_code) : ojson(nullptr);
  o["signal"] = j.signal ? ojson(*j.signal) : ojson(nullptr);
  o["start"] = when(j.start);
  o["end"] = when(j.end);
  const verdict::JobOutcome& out = v.outcome;
  ojson end;
  end["end"] = verdict::job_end_id(out.end);
  end["exit_code"] = out.exit_code ? ojson(*out.exit_code) : ojson(nullptr);
  end["signal"] = out.signal ? ojson(*out.signal) : ojson(nullptr);
  end["signal_name"] = out.signal ? ojson(verdict::signal_name(*out.signal)) : ojson(nullptr);
  end["died"] = out.died();
  end["out_of_memory"] = out.out_of_memory;
  end["gpu"] = out.gpu ? ojson(*out.gpu) : ojson(nullptr);
  end["memory_peak_mib"] = out.memory_peak_mib ? ojson(*out.memory_peak_mib) : ojson(nullptr);
  end["memory_total_mib"] = out.memory_total_mib ? ojson(*out.memory_total_mib) : ojson(nullptr);
  end["lookback_s"] = verdict::kOomLookbackS;
  end["memory_at_ceiling"] = out.memory_at_ceiling;
  end["out_of_memory_basis"] = out.out_of_memory_basis();
  // What the job said on stderr (`gpulens run`); null fields where it said nothing.
  const StderrScan& scan = out.stderr_scan;
  const auto mib = [](const std::optional<double>& x) {
    return json_number(x, decimals::kReading);
  };
  end["stderr"] = {{"scan", text_or_null(scan.state)},
                   {"oom_message", text_or_null(scan.oom_message)},
                   {"oom_source", text_or_null(scan.oom_source)},
                   {"oom_tried_mib", mib(scan.oom_tried_mib)},
                   {"oom_free_mib", mib(scan.oom_free_mib)},
                   {"oom_capacity_mib", mib(scan.oom_capacity_mib)}};
  o["outcome"] = std::move(end);
  return o;
}

ojson headline_json(const verdict::Verdict& v) {
  ojson out = ojson::array();
  for (const auto& h : v.headline) {
    out.push_back(
        {{"kind", h.kind}, {"text", h.text}, {"gpu", h.gpu ? ojson(*h.gpu) : ojson(nullptr)}});
  }
  return out;
}

ojson steady_json(const verdict::Verdict& v) {
  const verdict::SteadyState& s = v.steady;
  ojson o;
  o["start"] = when(s.start);
  o["end"] = when(s.end);
  o["seconds"] = s.start ? ojson(round_to(*s.end - *s.start, decimals::kTime)) : ojson(nullptr);
  o["startup_share"] = ratio(v.startup_share);
  o["teardown_share"] = ratio(v.teardown_share);
  o["sm_active"] = ratio(v.steady_usage.sm.ratio());
  o["tensor_active"] = ratio(v.steady_usage.tensor.ratio());
  ojson gpus = ojson::array();
  for (const auto& g : s.gpus) {
    gpus.push_back({{"gpu", g.gpu},
                    {"work_start", when(g.work_start)},
                    {"work_end", when(g.work_end)},
                    {"startup_s", round_to(g.startup_s, decimals::kTime)},
                    {"teardown_s", round_to(g.teardown_s, decimals::kTime)}});
  }
  o["gpus"] = std::move(gpus);
  ojson imbalance = ojson::array();
  for (const auto& im : v.imbalance) {
    imbalance.push_back({{"gpu", im.gpu},
                         {"peer", im.peer ? ojson(*im.peer) : ojson(nullptr)},
                         {"waiting_s", round_to(im.waiting_s, decimals::kTime)},
                         {"share", ratio(im.share)},
                         {"sm_active", ratio(im.sm_active)},
                         {"peer_sm_active", ratio(im.peer_sm_active)}});
  }
  o["imbalance"] = std::move(imbalance);
  return o;
}

ojson fixes_json(const verdict::Verdict& v) {
  ojson out = ojson::array();
  for (const auto& f : v.ranked_fixes) {
    out.push_back({{"text", f.text},
                   {"about", f.about},
                   {"tier", verdict::fix_tier_id(f.tier)},
                   {"gpus", f.gpus}});
  }
  return out;
}

ojson usage_funnel(const verdict::GpuUsage& u) {
  ojson o;
  o["allocated"] = ratio(u.allocated.ratio());
  o["kernel_active"] = ratio(u.kernel.ratio());
  o["sm_active"] = ratio(u.sm.ratio());
  o["tensor_active"] = ratio(u.tensor.ratio());
  o["dram_active"] = ratio(u.dram.ratio());
  return o;
}

ojson funnel_json(const verdict::Verdict& v) {
  ojson o;
  o["paid_gpu_hours"] = fine(v.funnel.paid_gpu_hours);
  for (const auto& s : v.funnel.steps) o[s.id] = ratio(s.share);
  ojson steps = ojson::array();
  for (const auto& s : v.funnel.steps) {
    steps.push_back({{"id", s.id},
                     {"label", s.label},
                     {"share", ratio(s.share)},
                     {"gpu_hours", fine(s.gpu_hours)},
                     {"of_previous", ratio(s.of_previous)},
                     {"basis", s.basis}});
  }
  o["steps"] = std::move(steps);
  return o;
}

ojson alerts_json(const verdict::Verdict& v) {
  ojson out = ojson::array();
  for (const auto& a : v.alerts) {
    out.push_back({{"rule", a.rule},
                   {"gpu", a.gpu},
                   {"severity", diagnosis::severity_id(a.severity)},
                   {"since", when(a.since)},
                   {"fired_at", when(a.fired_at)},
                   {"resolved_at", when(a.resolved_at)},
                   {"count", a.count},
                   {"message", a.message},
                   {"fixes", a.fixes}});
  }
  return out;
}

ojson cost_json(const verdict::Cost& c) {
  ojson o;
  o["currency"] = c.currency;
  o["price_per_gpu_hour"] = fine(c.price_per_gpu_hour);
  o["price_source"] = text_or_null(c.price_source);
  o["gpu_hours"] = fine(c.gpu_hours);
  o["total"] = fine(c.total);
  o["edges"] = fine(c.edges);
  o["idle"] = fine(c.idle);
  o["working_unmeasured"] = fine(c.working_unmeasured);
  o["inefficiency"] = fine(c.inefficiency);
  o["useful"] = fine(c.useful);
  o["waste"] = fine(c.waste);
  o["waste_share"] = ratio(c.waste_share);
  o["monthly_cost"] = fine(c.monthly_cost);
  o["monthly_waste"] = fine(c.monthly_waste);
  return o;
}

ojson work_json(const verdict::ModelWork& w, std::optional<double> mfu) {
  return {{"mfu", ratio(mfu)},
          {"tflops", round_to(w.flops_per_s() / 1e12, decimals::kReading)},
          {"flops", w.flops},
          {"seconds", round_to(w.seconds, decimals::kTime)},
          {"steps", w.steps},
          {"start", round_to(w.start, decimals::kTime)},
          {"end", round_to(w.end, decimals::kTime)},
          {"source", w.source}};
}

ojson mfu_json(const verdict::Verdict& v) {
  const verdict::MfuSummary& m = v.mfu;
  ojson o;
  o["dtype"] = m.peak.dtype;
  o["gpus"] = m.peak.gpus;
  o["peak_tflops_per_gpu"] = m.peak.per_gpu_tflops ? ojson(*m.peak.per_gpu_tflops) : nullptr;
  o["peak_tflops_total"] =
      m.peak.known() ? ojson(round_to(m.peak.total_tflops, decimals::kReading)) : nullptr;
  o["peak_source"] = text_or_null(m.peak.source);
  o["model_name"] = text_or_null(m.peak.model);
  if (m.work) {
    ojson w = work_json(*m.work, m.model);
    w["over_job"] = ratio(m.model_over_job);
    o["model"] = std::move(w);
  } else {
    o["model"] = nullptr;
  }
  if (m.estimate || m.estimate_job) {
    o["estimate"] = {{"mfu", ratio(m.estimate)},
                     {"over_job", ratio(m.estimate_job)},
                     {"clock_corrected", m.estimate_clock_corrected},
                     {"basis", m.estimate_clock_corrected ? "tensor_active x sm_clock / peak clock"
                                                          : "tensor_active"},
                     {"label", "hardware estimate from tensor-pipe activity, not model FLOPs"}};
  } else {
    o["estimate"] = nullptr;
  }
  return o;
}

ojson phases_json(const verdict::Verdict& v) {
  ojson out = ojson::array();
  for (const auto& p : v.phases) {
    ojson g = ojson::array();
    for (const auto& x : p.gpus) {
      g.push_back({{"gpu", x.gpu},
                   {"state", diagnosis::state_id(x.state)},
                   {"state_share", ratio(x.state_share)},
                   {"flags", x.flags},
                   {"gpu_util", fine(x.means.get(Metric::GpuUtil))},
                   {"sm_active", fine(x.means.get(Metric::SmActive))},
                   {"tensor_active", fine(x.means.get(Metric::TensorActive))},
                   {"dram_active", fine(x.means.get(Metric::DramActive))},
                   {"summary", x.summary}});
    }
    out.push_back({{"name", p.name},
                   {"start", round_to(p.start, decimals::kTime)},
                   {"end", round_to(p.end, decimals::kTime)},
                   {"seconds", round_to(p.end - p.start, decimals::kTime)},
                   {"gpus", std::move(g)},
                   {"model", p.work ? work_json(*p.work, p.mfu) : ojson(nullptr)},
                   {"estimate", ratio(p.estimate)}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json verdict_to_json(const verdict::Verdict& v) {
  ojson o;
  o["format"] = "gpulens-report";
  o["version"] = kReportJsonVersion;
  o["host"] = text_or_null(v.host);
  o["headline"] = v.headline.empty() ? ojson(nullptr) : ojson(v.headline.front().text);
  o["headline_items"] = headline_json(v);
  o["job"] = job_json(v);
  o["measured"] = v.measured;
  o["not_measured"] = text_or_null(v.not_measured);
  ojson gpus = ojson::array();
  for (std::size_t i = 0; i < v.devices.size(); ++i) {
    const auto& d = v.devices[i];
    ojson g{{"index", d.index}, {"name", text_or_null(d.name)}, {"uuid", text_or_null(d.uuid)}};
    if (i < v.usage.size()) {
      const auto& u = v.usage[i];
      g["funnel"] = usage_funnel(u);
      g["energy_kwh"] =
          u.energy_j ? ojson(round_to(*u.energy_j / 3.6e6, decimals::kFine)) : nullptr;
      g["mean_power_w"] =
          u.mean_power_w ? ojson(round_to(*u.mean_power_w, decimals::kPower)) : nullptr;
      g["peak_mem_mib"] = u.peak_mem_mib ? ojson(*u.peak_mem_mib) : nullptr;
    }
    gpus.push_back(std::move(g));
  }
  o["gpus"] = std::move(gpus);
  o["gpus_basis"] = text_or_null(v.gpus_basis);
  o["start"] = when(v.start);
  o["end"] = when(v.end);
  o["duration_s"] = round_to(v.duration_s, decimals::kTime);
  o["gpu_hours"] = fine(v.gpu_hours);
  o["energy_kwh"] = fine(v.energy_kwh);
  o["energy_basis"] = text_or_null(v.energy_basis);
  o["funnel"] = funnel_json(v);
  ojson states = ojson::array();
  for (const auto& s : v.states) {
    states.push_back({{"state", diagnosis::state_id(s.state)},
                      {"share", ratio(s.share)},
                      {"gpu_hours", fine(s.gpu_hours)}});
  }
  o["states"] = std::move(states);
  o["steady_state"] = steady_json(v);
  o["throttled_share"] = ratio(v.throttled_share);
  o["alerts"] = alerts_json(v);
  o["fixes"] = v.fixes;
  o["fix_details"] = fixes_json(v);
  o["cost"] = cost_json(v.cost);
  o["mfu"] = mfu_json(v);
  o["phases"] = phases_json(v);
  o["notes"] = v.notes;
  ojson gaps = ojson::array();
  for (const auto& g : v.evidence_gaps) {
    gaps.push_back(ojson{
        {"what", g.what}, {"settle", g.settle}, {"share", json_number(g.share, decimals::kRatio)}});
  }
  o["evidence_gaps"] = std::move(gaps);
  return o;
}

}  // namespace gpulens::render

// The stable JSON form of a diagnosis report (documented in docs/diagnosis.md).
#include <cmath>

#include "diagnosis/timeline.hpp"

namespace gpulens {
namespace {

using ojson = nlohmann::ordered_json;

// Rounded so that the output is stable and readable, never NaN.
ojson num(double v, int digits = 4) {
  if (!std::isfinite(v)) return nullptr;
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

ojson opt(const std::optional<double>& v, int digits = 4) {
  return v ? num(*v, digits) : ojson(nullptr);
}

ojson evidence_json(const std::vector<Evidence>& list) {
  ojson out = ojson::array();
  for (const auto& e : list) {
    ojson j;
    j["key"] = e.key;
    j["value"] = opt(e.value);
    if (!e.op.empty()) j["op"] = e.op;
    if (e.threshold) j["threshold"] = num(*e.threshold);
    if (!e.unit.empty()) j["unit"] = e.unit;
    if (!e.note.empty()) j["note"] = e.note;
    out.push_back(std::move(j));
  }
  return out;
}

ojson shares_json(const StateShares& shares) {
  ojson out = ojson::object();
  std::vector<std::pair<double, GpuState>> order;
  for (const auto s : all_states()) {
    const double share = shares.share(s);
    if (share > 0) order.emplace_back(share, s);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [share, s] : order) out[std::string(state_id(s))] = num(share);
  return out;
}

ojson means_json(const MetricValues& means) {
  ojson out = ojson::object();
  for (const auto& info : all_metrics()) {
    if (const auto v = means.get(info.id)) {
      if (info.id == Metric::ClockEventReasons || info.id == Metric::EnergyMj) continue;
      out[std::string(info.key)] = num(*v, 3);
    }
  }
  return out;
}

ojson strings(const std::vector<std::string>& list) {
  ojson out = ojson::array();
  for (const auto& s : list) out.push_back(s);
  return out;
}

ojson limits_json(const HardwareLimits& hw) {
  ojson j;
  j["sm_count"] = hw.sm_count ? ojson(*hw.sm_count) : ojson(nullptr);
  j["pcie_gbytes_s"] = hw.pcie_mibs ? num(*hw.pcie_mibs / kMibPerGb, 2) : ojson(nullptr);
  if (!hw.pcie_basis.empty()) j["pcie_basis"] = hw.pcie_basis;
  j["nvlink_gbytes_s"] = hw.nvlink_mibs ? num(*hw.nvlink_mibs / kMibPerGb, 2) : ojson(nullptr);
  if (!hw.nvlink_basis.empty()) j["nvlink_basis"] = hw.nvlink_basis;
  j["dram_practical_peak_pct"] = num(hw.dram_practical_peak_pct, 2);
  j["power_limit_w"] = opt(hw.power_limit_w, 1);
  j["max_sm_clock_mhz"] = opt(hw.max_sm_clock_mhz, 0);
  j["mem_total_mib"] = opt(hw.mem_total_mib, 0);
  j["architecture"] = hw.architecture;
  return j;
}

}  // namespace

nlohmann::ordered_json report_to_json(const DiagnosisReport& r) {
  ojson out;
  out["format"] = "gpulens-diagnosis";
  out["version"] = 1;
  out["host"] = r.host;
  out["start"] = opt(r.start, 3);
  out["end"] = opt(r.end, 3);
  out["window_s"] = num(r.window_s, 3);

  ojson gpus = ojson::array();
  for (const auto& g : r.gpus) {
    ojson j;
    j["gpu"] = g.gpu;
    j["name"] = g.name;
    j["state"] = state_id(g.state);
    j["shares"] = shares_json(g.shares);
    j["throttled_share"] = num(g.throttled_share);
    j["efficiency"] = opt(g.efficiency, 2);
    j["means"] = means_json(g.means);
    j["limits"] = limits_json(g.limits);
    j["notes"] = strings(g.limits.notes);
    gpus.push_back(std::move(j));
  }
  out["gpus"] = std::move(gpus);

  ojson phases = ojson::array();
  for (const auto& p : r.phases) {
    ojson j;
    j["name"] = p.name;
    j["gpu"] = p.gpu;
    j["start"] = num(p.start, 3);
    j["end"] = num(p.end, 3);
    j["state"] = state_id(p.state);
    j["shares"] = shares_json(p.shares);
    j["flags"] = strings(p.flags);
    j["throttled_share"] = num(p.throttled_share);
    if (!p.throttle_cause.empty()) j["throttle_cause"] = p.throttle_cause;
    j["efficiency"] = opt(p.efficiency, 2);
    j["means"] = means_json(p.means);
    j["summary"] = p.summary;
    j["fixes"] = strings(p.fixes);
    j["fields"] = ojson::parse(p.fields.dump());
    phases.push_back(std::move(j));
  }
  out["phases"] = std::move(phases);

  ojson timeline = ojson::array();
  for (const auto& run : r.timeline) {
    ojson j;
    j["gpu"] = run.gpu;
    j["start"] = num(run.start, 3);
    j["end"] = num(run.end, 3);
    j["state"] = state_id(run.state);
    j["confidence"] = num(run.confidence, 2);
    j["flags"] = run.throttled_share >= 0.5 ? strings({"throttled"}) : ojson::array();
    if (!run.throttle_cause.empty()) j["throttle_cause"] = run.throttle_cause;
    j["summary"] = run.summary;
    j["evidence"] = evidence_json(run.evidence);
    j["cannot_tell"] = strings(run.cannot_tell);
    j["fixes"] = strings(run.fixes);
    timeline.push_back(std::move(j));
  }
  out["timeline"] = std::move(timeline);

  ojson alerts = ojson::array();
  for (const auto& a : r.alerts) {
    ojson j;
    j["rule"] = a.rule;
    j["gpu"] = a.gpu;
    j["severity"] = severity_id(a.severity);
    j["since"] = num(a.since, 3);
    j["fired_at"] = num(a.fired_at, 3);
    j["resolved_at"] = opt(a.resolved_at, 3);
    j["message"] = a.message;
    j["count"] = a.count;
    j["evidence"] = evidence_json(a.evidence);
    j["fixes"] = strings(a.fixes);
    alerts.push_back(std::move(j));
  }
  out["alerts"] = std::move(alerts);
  out["notes"] = strings(r.notes);
  return out;
}

}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
// The stable JSON form of a diagnosis report (documented in docs/diagnosis.md).
#include <cmath>

#include "core/json_number.hpp"
#include "render/timeline_output.hpp"

namespace gpulens::render {
namespace {

using ojson = nlohmann::ordered_json;

ojson shares_json(const diagnosis::StateShares& shares) {
  ojson out = ojson::object();
  std::vector<std::pair<double, diagnosis::GpuState>> order;
  for (const auto s : diagnosis::all_states()) {
    const double share = shares.share(s);
    if (share > 0) order.emplace_back(share, s);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [share, s] : order)
    out[std::string(diagnosis::state_id(s))] = json_number(share, decimals::kRatio);
  return out;
}

// The means of a run or phase; the clock reasons bitmask and the energy
// counter have no meaningful mean.
ojson means_json(const MetricValues& means) {
  ojson out = means;
  out.erase(std::string(metric_info(Metric::ClockEventReasons).key));
  out.erase(std::string(metric_info(Metric::EnergyMj).key));
  return out;
}

ojson strings(const std::vector<std::string>& list) {
  ojson out = ojson::array();
  for (const auto& s : list) out.push_back(s);
  return out;
}

ojson limits_json(const diagnosis::HardwareLimits& hw) {
  ojson j;
  j["sm_count"] = hw.sm_count ? ojson(*hw.sm_count) : ojson(nullptr);
  j["pcie_gbytes_s"] = hw.pcie_mibs
                           ? json_number(*hw.pcie_mibs / diagnosis::kMibPerGb, decimals::kRate)
                           : ojson(nullptr);
  if (!hw.pcie_basis.empty()) j["pcie_basis"] = hw.pcie_basis;
  j["nvlink_gbytes_s"] = hw.nvlink_mibs
                             ? json_number(*hw.nvlink_mibs / diagnosis::kMibPerGb, decimals::kRate)
                             : ojson(nullptr);
  if (!hw.nvlink_basis.empty()) j["nvlink_basis"] = hw.nvlink_basis;
  j["dram_practical_peak_pct"] = json_number(hw.dram_practical_peak_pct, decimals::kRate);
  j["power_limit_w"] = json_number(hw.power_limit_w, decimals::kPower);
  j["max_sm_clock_mhz"] = json_number(hw.max_sm_clock_mhz, decimals::kWhole);
  j["mem_total_mib"] = json_number(hw.mem_total_mib, decimals::kWhole);
  j["architecture"] = hw.architecture;
  return j;
}

}  // namespace

nlohmann::ordered_json report_to_json(const diagnosis::DiagnosisReport& r) {
  ojson out;
  out["format"] = "gpulens-diagnosis";
  out["version"] = 1;
  out["host"] = r.host;
  out["start"] = json_number(r.start, decimals::kTime);
  out["end"] = json_number(r.end, decimals::kTime);
  out["window_s"] = json_number(r.window_s, decimals::kTime);

  ojson gpus = ojson::array();
  for (const auto& g : r.gpus) {
    ojson j;
    j["gpu"] = g.gpu;
    j["name"] = g.name;
    j["state"] = diagnosis::state_id(g.state);
    j["shares"] = shares_json(g.shares);
    j["throttled_share"] = json_number(g.throttled_share, decimals::kRatio);
    j["efficiency"] = json_number(g.efficiency, decimals::kScore);
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
    j["start"] = json_number(p.start, decimals::kTime);
    j["end"] = json_number(p.end, decimals::kTime);
    j["state"] = diagnosis::state_id(p.state);
    j["shares"] = shares_json(p.shares);
    j["flags"] = strings(p.flags);
    j["throttled_share"] = json_number(p.throttled_share, decimals::kRatio);
    if (!p.throttle_cause.empty()) j["throttle_cause"] = p.throttle_cause;
    j["efficiency"] = json_number(p.efficiency, decimals::kScore);
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
    j["start"] = json_number(run.start, decimals::kTime);
    j["end"] = json_number(run.end, decimals::kTime);
    j["state"] = diagnosis::state_id(run.state);
    j["confidence"] = json_number(run.confidence, decimals::kScore);
    j["flags"] = run.throttled_share >= 0.5 ? strings({"throttled"}) : ojson::array();
    if (!run.throttle_cause.empty()) j["throttle_cause"] = run.throttle_cause;
    j["summary"] = run.summary;
    j["evidence"] = run.evidence;
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
    j["severity"] = diagnosis::severity_id(a.severity);
    j["since"] = json_number(a.since, decimals::kTime);
    j["fired_at"] = json_number(a.fired_at, decimals::kTime);
    j["resolved_at"] = json_number(a.resolved_at, decimals::kTime);
    j["message"] = a.message;
    j["count"] = a.count;
    j["evidence"] = a.evidence;
    j["fixes"] = strings(a.fixes);
    alerts.push_back(std::move(j));
  }
  out["alerts"] = std::move(alerts);
  out["notes"] = strings(r.notes);
  return out;
}

}  // namespace gpulens::render

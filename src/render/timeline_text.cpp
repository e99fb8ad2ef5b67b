// SPDX-License-Identifier: Apache-2.0
// The readable form of a diagnosis report: verdicts first, evidence after.
#include <fmt/format.h>

#include "core/text_safety.hpp"
#include "core/text_units.hpp"
#include "render/timeline_output.hpp"

namespace gpulens::render {
namespace {

std::string rel(double t, const diagnosis::DiagnosisReport& r) {
  return fmt::format("{:+.1f}s", t - r.start.value_or(t));
}

std::string shares_text(const diagnosis::StateShares& shares, std::size_t max_items = 3) {
  std::vector<std::pair<double, diagnosis::GpuState>> order;
  for (const auto s : diagnosis::all_states()) {
    if (const double share = shares.share(s); share > 0) order.emplace_back(share, s);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (std::size_t i = 0; i < order.size() && i < max_items; ++i) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", diagnosis::state_id(order[i].second), share_text(order[i].first));
  }
  return out;
}

std::string value(const MetricValues& v, Metric m, const char* spec = "{:.1f}") {
  const auto x = v.get(m);
  return x ? fmt::format(fmt::runtime(spec), *x) : std::string("-");
}

void gpus_section(std::string& out, const diagnosis::DiagnosisReport& r) {
  for (const auto& g : r.gpus) {
    out += fmt::format("GPU {}  {}", g.gpu, g.name.empty() ? "(unnamed)" : terminal_safe(g.name));
    if (g.limits.sm_count) out += fmt::format(", {} SMs", *g.limits.sm_count);
    if (!g.limits.pcie_basis.empty()) out += ", " + g.limits.pcie_basis;
    out += "\n";
    if (!g.limits.nvlink_basis.empty()) out += "  " + g.limits.nvlink_basis + "\n";
    if (g.shares.total() > 0) {
      out += fmt::format("  overall: {}", shares_text(g.shares));
      if (g.efficiency) out += fmt::format("; efficiency {}", points_text(*g.efficiency));
      if (g.throttled_share > 0)
        out += fmt::format("; throttled {} of the time", share_text(g.throttled_share));
      out += "\n";
    }
    for (const auto& n : g.limits.notes) out += "  note: " + n + "\n";
  }
}

void phases_section(std::string& out, const diagnosis::DiagnosisReport& r) {
  if (r.phases.empty()) return;
  out += "\nPhases\n";
  out += fmt::format("  {:<26} {:>3}  {:<20} {:>6}  {:>5} {:>5} {:>6} {:>5}  {}\n", "phase", "gpu",
                     "state", "share", "util", "sm", "tensor", "dram", "flags");
  for (const auto& p : r.phases) {
    std::string flags;
    for (const auto& f : p.flags) flags += (flags.empty() ? "" : ",") + f;
    out += fmt::format("  {:<26} {:>3}  {:<20} {:>6}  {:>5} {:>5} {:>6} {:>5}  {}\n",
                       terminal_safe(p.name), p.gpu, diagnosis::state_id(p.state),
                       share_text(p.shares.share(p.state)), value(p.means, Metric::GpuUtil),
                       value(p.means, Metric::SmActive), value(p.means, Metric::TensorActive),
                       value(p.means, Metric::DramActive), flags);
  }
  for (const auto& p : r.phases) {
    out += fmt::format("\n  {} (GPU {}): {}", terminal_safe(p.name), p.gpu, p.summary);
    if (!p.throttle_cause.empty()) out += " Throttled: " + p.throttle_cause + ".";
    out += "\n";
    if (p.shares.share(p.state) < 0.999) out += "    time: " + shares_text(p.shares) + "\n";
    for (const auto& f : p.fixes) out += "    fix: " + f + "\n";
  }
}

void timeline_section(std::string& out, const diagnosis::DiagnosisReport& r) {
  if (r.timeline.empty()) return;
  out += "\nTimeline\n";
  for (const auto& run : r.timeline) {
    out += fmt::format("  GPU {} {:>9} .. {:<9} {:<20} {:<6} {}{}\n", run.gpu, rel(run.start, r),
                       rel(run.end, r), diagnosis::state_id(run.state),
                       diagnosis::confidence_level(run.confidence), run.summary,
                       run.throttled_share >= 0.5 ? " [throttled]" : "");
  }
}

void alerts_section(std::string& out, const diagnosis::DiagnosisReport& r) {
  out += "\nAlerts\n";
  if (r.alerts.empty()) {
    out += "  none\n";
    return;
  }
  for (const auto& a : r.alerts) {
    out += fmt::format("  [{}] {} on GPU {} at {}", diagnosis::severity_id(a.severity), a.rule,
                       a.gpu, rel(a.fired_at, r));
    out += a.resolved_at ? fmt::format(", resolved at {}", rel(*a.resolved_at, r))
                         : std::string(", still firing");
    if (a.count > 1) out += fmt::format(" ({} times)", a.count);
    out += "\n    " + a.message + "\n";
    for (const auto& f : a.fixes) out += "    fix: " + f + "\n";
  }
}

}  // namespace

// Names (host, GPUs, phases) are made one-line safe where they are formatted; the
// whole text passes terminal_safe_text on the way out, so that no field brings a
// control to the terminal.
std::string report_to_text(const diagnosis::DiagnosisReport& r) {
  std::string out;
  const double span = r.start && r.end ? *r.end - *r.start : 0;
  out += fmt::format("gpulens diagnose: {}{} GPU(s), {}, window {}\n\n",
                     r.host.empty() ? "" : "host " + terminal_safe(r.host) + ", ", r.gpus.size(),
                     duration_text(span), duration_text(r.window_s));
  gpus_section(out, r);
  phases_section(out, r);
  timeline_section(out, r);
  alerts_section(out, r);
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  return terminal_safe_text(out);
}

}  // namespace gpulens::render

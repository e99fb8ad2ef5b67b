// SPDX-License-Identifier: Apache-2.0
// The verdict in words, for a terminal: the answer first (what ran, how long,
// how much of the GPU time did work), the reasons and fixes next, money last.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/text_safety.hpp"
#include "core/text_units.hpp"
#include "render/format.hpp"
#include "render/verdict_output.hpp"
#include "verdict/state_words.hpp"

namespace gpulens::render {
namespace {

std::string rel(double t, const verdict::Verdict& v) {
  return fmt::format("+{:.1f}s", t - v.start.value_or(t));
}

std::string bar(std::optional<double> share, int width = 30) {
  if (!share) return {};
  // Eighths of a block, so that small differences still show.
  static const char* kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  const long eighths = std::lround(std::clamp(*share, 0.0, 1.0) * width * 8);
  std::string out;
  for (long i = 0; i < eighths / 8; ++i) out += "█";
  out += kEighths[eighths % 8];
  return out;
}

std::string gpus_line(const verdict::Verdict& v) {
  std::map<std::string, std::vector<int>> by_name;
  for (const auto& d : v.devices)
    by_name[d.name.empty() ? "GPU" : terminal_safe(d.name)].push_back(d.index);
  std::string out;
  for (const auto& [name, idx] : by_name) {
    if (!out.empty()) out += "; ";
    std::string list;
    for (int i : idx) {
      if (!list.empty()) list += ',';
      list += std::to_string(i);
    }
    out += fmt::format("{} × {} (GPU {})", idx.size(), name, list);
  }
  return out;
}

void headline(std::string& out, const verdict::Verdict& v) {
  const auto& job = v.job;
  if (job.present && !job.command.empty()) {
    std::string how = job.signal      ? fmt::format("was killed by signal {} ({})", *job.signal,
                                                    verdict::signal_name(*job.signal))
                      : job.exit_code ? fmt::format("exited with code {}", *job.exit_code)
                                      : std::string("ran");
    out += fmt::format("gpulens: `{}` {} after {}\n", terminal_safe(job.command), how,
                       duration_text(v.duration_s));
  } else {
    out += fmt::format("gpulens: {}{}\n",
                       v.host.empty() ? "recording" : "recording of " + terminal_safe(v.host),
                       v.duration_s > 0 ? ", " + duration_text(v.duration_s) : "");
  }
  // What matters most first: the headline, then the rest in the same order.
  for (std::size_t i = 0; i < v.headline.size(); ++i) {
    out += fmt::format("  {:<8} {}\n", i == 0 ? "verdict" : "", v.headline[i].text);
  }
  if (!v.measured) return;
  out += fmt::format("  GPUs     {}\n", gpus_line(v));
  std::string energy;
  if (v.energy_kwh) energy = fmt::format(", {:.3g} kWh ({})", *v.energy_kwh, v.energy_basis);
  out += fmt::format("  time     {} GPU-hours{}\n", format_gpu_hours(v.gpu_hours), energy);
}

// One line per GPU, as Slurm users read them first in Princeton's jobstats: what
// each GPU did over the whole recording (kernel-active, SMs busy, tensor pipes),
// the most device memory it held, and the state it spent the most time in. A
// GPU that idled beside a busy one stands out here before any share of the sums.
void per_gpu_section(std::string& out, const verdict::Verdict& v) {
  if (v.usage.empty()) return;
  out += "\n  Per GPU (means over the recording; memory at its peak)\n";
  out += fmt::format("    {:>3}  {:>7}  {:>7}  {:>7}  {:<30}  {}\n", "GPU", "util", "SM act",
                     "tensor", "peak memory", "main state");
  const auto pct = [](const verdict::Weighted& w) {
    const auto r = w.ratio();
    return r ? share_text(*r, 1) : std::string("-");
  };
  for (const auto& u : v.usage) {
    std::string memory = "-";
    if (u.peak_mem_mib) {
      memory = gib_text(*u.peak_mem_mib);
      const auto device = std::find_if(v.devices.begin(), v.devices.end(),
                                       [&](const DeviceInfo& d) { return d.index == u.gpu; });
      if (device != v.devices.end() && device->mem_total_mib && *device->mem_total_mib > 0) {
        memory = fmt::format("{} of {} ({})", gib_text(*u.peak_mem_mib),
                             gib_text(*device->mem_total_mib),
                             share_text(*u.peak_mem_mib / *device->mem_total_mib, 0));
      }
    }
    std::string state = "-";
    const auto summary =
        std::find_if(v.diagnosis.gpus.begin(), v.diagnosis.gpus.end(),
                     [&](const diagnosis::GpuSummary& g) { return g.gpu == u.gpu; });
    if (summary != v.diagnosis.gpus.end() && summary->shares.total() > 0 &&
        summary->state != diagnosis::GpuState::Unknown) {
      state = fmt::format("{} ({} of the time)", verdict::state_words(summary->state),
                          share_text(summary->shares.share(summary->state), 0));
    }
    out += fmt::format("    {:>3}  {:>7}  {:>7}  {:>7}  {:<30}  {}\n", u.gpu, pct(u.kernel),
                       pct(u.sm), pct(u.tensor), memory, state);
  }
}

void funnel_section(std::string& out, const verdict::Verdict& v) {
  out += "\n  Utilization funnel (share of the GPU time paid for)\n";
  for (const auto& s : v.funnel.steps) {
    if (!s.share) {
      out += fmt::format("    {:<14} not measured\n", s.label);
      continue;
    }
    out += fmt::format("    {:<14} {:>6}  {:>8} GPU-h  {}\n", s.label, share_text(s.share, 1),
                       format_gpu_hours(*s.gpu_hours), bar(s.share));
  }
  for (const auto& s : v.funnel.steps) {
    out += fmt::format("    {}: {}{}\n", s.label, s.meaning,
                       s.id == "allocated" ? ", judged from " + s.basis : std::string());
  }
}

void states_section(std::string& out, const verdict::Verdict& v) {
  if (v.states.empty() && v.edges_share <= 0) return;
  // Two columns: the share of all the time (adds up to 100 % with start-up and
  // tear-down) and the share of the steady state the headline quotes.
  const double steady = 1.0 - v.edges_share;
  const bool apart = v.edges_share >= 0.005 && steady > 0;
  out += fmt::format("\n  What the GPUs were doing (share of time{})\n",
                     apart ? "; of the steady state" : "");
  for (const auto& s : v.states) {
    if (s.share < 0.005) continue;  // rounds to 0 %: noise in a summary
    out += fmt::format(
        "    {:<24} {:>5} {:>6}  {}\n", verdict::state_words(s.state), share_text(s.share, 0),
        apart ? share_text(s.share / steady, 0) : std::string(), diagnosis::state_meaning(s.state));
  }
  if (v.startup_share >= 0.005) {
    out += fmt::format("    {:<24} {:>5} {:>6}  {}\n", "start-up", share_text(v.startup_share, 0),
                       "", "no GPU work yet (imports, loading, compiling): not waste of the job");
  }
  if (v.teardown_share >= 0.005) {
    out += fmt::format("    {:<24} {:>5} {:>6}  {}\n", "tear-down", share_text(v.teardown_share, 0),
                       "", "no GPU work after the last (saving, exiting): not waste of the job");
  }
  if (v.throttled_share >= 0.05) {
    out += fmt::format("    throttled {} of the time (clocks held down by power or heat)\n",
                       share_text(v.throttled_share, 0));
  }
}

void alerts_section(std::string& out, const verdict::Verdict& v) {
  if (v.alerts.empty()) return;
  out += "\n  Alerts\n";
  for (const auto& a : v.alerts) {
    out += fmt::format("    [{}] {} on GPU {} at {}{}{}: {}\n", diagnosis::severity_id(a.severity),
                       verdict::rule_words(a.rule), a.gpu, rel(a.fired_at, v),
                       a.resolved_at ? ", resolved " + rel(*a.resolved_at, v) : ", still firing",
                       a.count > 1 ? fmt::format(" ({} times)", a.count) : "", a.message);
  }
}

void fixes_section(std::string& out, const verdict::Verdict& v) {
  if (v.fixes.empty()) return;
  out += "\n  Fixes that matter most\n";
  for (std::size_t i = 0; i < v.fixes.size(); ++i) {
    out += fmt::format("    {}. {}\n", i + 1, v.fixes[i]);
  }
}

// Under the fixes: how far to trust them, and what would settle it.
void evidence_gaps(std::string& out, const verdict::Verdict& v) {
  if (v.evidence_gaps.empty()) return;
  out += "\n  How sure: thin evidence\n";
  for (const auto& g : v.evidence_gaps) {
    out += fmt::format("    - {} ({} of the steady state){}\n", g.what, share_text(g.share, 0),
                       g.settle.empty() ? "" : "; would settle it: " + g.settle);
  }
}

void cost_section(std::string& out, const verdict::Verdict& v) {
  const verdict::Cost& c = v.cost;
  if (!c.total) return;
  const auto money = [&](double x) { return format_money(x, c.currency); };
  out += fmt::format("\n  Cost at {} per GPU-hour ({}): {}\n", money(*c.price_per_gpu_hour),
                     c.price_source, money(*c.total));
  const auto line = [&](const char* label, std::optional<double> x) {
    if (!x) return;
    out += fmt::format("    {:<44} {:>9}  {}\n", label, money(*x),
                       share_text(*x / std::max(*c.total, 1e-12), 0));
  };
  if (c.edges && *c.edges > 0) line("start-up and tear-down (not waste)", c.edges);
  line("idle in the steady state", c.idle);
  line("working (how well not measured)", c.working_unmeasured);
  line("inefficiency (working, SMs idle)", c.inefficiency);
  line("SMs at work", c.useful);
  if (c.monthly_waste && *c.monthly_waste > 0) {
    // Without SM activity the waste is the idle time alone: say so, so that the
    // figure is not read as all there is to save.
    out += fmt::format(
        "    Running jobs like this back to back wastes about {} per month ({}, {} of the "
        "cost): that is what the fixes can save.\n",
        money(*c.monthly_waste),
        c.working_unmeasured ? "idle time only; the working time's share was not measured"
                             : "idle and inefficiency",
        share_text(c.waste_share, 0));
  }
}

void mfu_section(std::string& out, const verdict::Verdict& v) {
  const verdict::MfuSummary& m = v.mfu;
  out += "\n  MFU";
  if (m.peak.known()) {
    out += fmt::format(" ({} dense peak {:.1f} TFLOP/s × {} GPU{})", m.peak.dtype,
                       m.peak.total_tflops / std::max(1, m.peak.gpus), m.peak.gpus,
                       m.peak.gpus == 1 ? "" : "s");
  }
  out += "\n";
  if (m.work && m.model) {
    out += fmt::format("    model FLOPs   {:>6}  {:.1f} TFLOP/s over {} ({} steps, from {})\n",
                       share_text(m.model, 1), m.work->flops_per_s() / 1e12,
                       duration_text(m.work->seconds), m.work->steps, m.work->source);
    if (m.model_over_job) {
      out += fmt::format("                  {:>6}  over the whole job, start-up included\n",
                         share_text(m.model_over_job, 1));
    }
  } else if (m.work) {
    out += fmt::format("    model FLOPs   {:.1f} TFLOP/s (no peak for MFU: {})\n",
                       m.work->flops_per_s() / 1e12,
                       m.peak.problems.empty() ? "unknown" : m.peak.problems.front());
  } else {
    out +=
        "    model FLOPs   not reported (write {\"mark\": \"step\", \"flops\": F} lines to "
        "$GPULENS_MARKS, or pass --flops-per-step with --step-regex)\n";
  }
  if (m.estimate) {
    out += fmt::format(
        "    estimate      {:>6}  from tensor-pipe activity{} (a hardware estimate, "
        "not model FLOPs)\n",
        share_text(m.estimate, 1), m.estimate_clock_corrected ? " at the SM clock" : "");
  } else {
    out += "    estimate      n/a     (tensor-pipe activity was not measured)\n";
  }
}

void phases_section(std::string& out, const verdict::Verdict& v) {
  if (v.phases.empty()) return;
  // One line per phase and GPU; the job's MFU goes on the phase's first line.
  const bool many = v.devices.size() > 1;
  out += "\n  Phases\n";
  out += fmt::format("    {:<26} {:>7}  {:<30} {:>5} {:>5} {:>6}  {:>6} {:>8}\n", "phase", "length",
                     many ? "GPU: state" : "state", "util", "sm", "tensor", "MFU", "estimate");
  for (const auto& p : v.phases) {
    const std::size_t rows = std::max<std::size_t>(1, p.gpus.size());
    for (std::size_t i = 0; i < rows; ++i) {
      std::string state = "-";
      std::string util = "-", sm = "-", tensor = "-";
      if (i < p.gpus.size()) {
        const auto& g = p.gpus[i];
        state = (many ? fmt::format("{}: ", g.gpu) : std::string()) + verdict::state_words(g.state);
        if (std::find(g.flags.begin(), g.flags.end(), "throttled") != g.flags.end()) {
          state += " +thr";
        }
        const auto num = [&](Metric m) {
          const auto x = g.means.get(m);
          return x ? fmt::format("{:.1f}", *x) : std::string("-");
        };
        util = num(Metric::GpuUtil);
        sm = num(Metric::SmActive);
        tensor = num(Metric::TensorActive);
      }
      const bool first = i == 0;
      out += fmt::format("    {:<26} {:>7}  {:<30} {:>5} {:>5} {:>6}  {:>6} {:>8}\n",
                         first ? terminal_safe(p.name) : "",
                         first ? duration_text(p.end - p.start) : "", state, util, sm, tensor,
                         first && p.mfu ? share_text(p.mfu, 1) : "-",
                         first && p.estimate ? share_text(p.estimate, 1) : "-");
    }
  }
}

}  // namespace

// Names (command, host, GPUs, phases) are made one-line safe where they are
// formatted above; the whole text passes terminal_safe_text once more on the way
// out, so that no field, today's or a later one, brings a control to the terminal.
std::string verdict_to_text(const verdict::Verdict& v) {
  std::string out;
  headline(out, v);
  if (v.measured) {
    per_gpu_section(out, v);
    funnel_section(out, v);
    states_section(out, v);
    alerts_section(out, v);
    fixes_section(out, v);
    evidence_gaps(out, v);
    cost_section(out, v);
    mfu_section(out, v);
    phases_section(out, v);
  }
  if (!v.notes.empty()) {
    out += "\n";
    for (const auto& n : v.notes) out += "  note: " + n + "\n";
  }
  return terminal_safe_text(out);
}

}  // namespace gpulens::render

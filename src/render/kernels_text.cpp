// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "core/text_safety.hpp"
#include "core/text_units.hpp"
#include "kernels/view/analysis.hpp"
#include "kernels/view/reconcile.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::render {
namespace {

using kernels::kGapLabels;

// A kernel or range name on its one line: made safe, then cut (a cut inside a
// multi-byte character would leave a broken one behind; the final pass replaces it).
std::string cut(const std::string& name, std::size_t n) {
  const std::string s = terminal_safe(name);
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

void idle_lines(std::string& out, const kernels::IdleStats& st, const std::string& what) {
  out += fmt::format("  GPU idle {} of {} ({} with no kernel, copy or memset on any stream)\n",
                     share_text(st.idle_share, 1), what, kernel_time_text(st.window_s - st.busy_s));
  out += "    gaps:";
  for (std::size_t i = 0; i < kGapLabels.size(); ++i) {
    out += st.gaps.count[i] == 0 ? fmt::format("  {} 0", kGapLabels[i])
                                 : fmt::format("  {} {}x {}", kGapLabels[i], st.gaps.count[i],
                                               kernel_time_text(st.gaps.seconds[i]));
  }
  out += "\n";
}

void nvtx_lines(std::string& out, const kernels::NvtxView& n) {
  out +=
      "  NVTX ranges (GPU busy and idle inside each; the window's idle time by innermost range):\n";
  out += fmt::format("  {:>7} {:>9} {:>9} {:>8} {:>11} {:>12}  {}\n", "count", "total", "mean",
                     "GPU busy", "idle inside", "window idle", "range");
  for (const auto& r : n.ranges) {
    const double share = n.window_idle_s > 0 ? r.attributed_idle_s / n.window_idle_s : 0;
    out += fmt::format("  {:7} {:>9} {:>9} {:>8} {:>11} {:>12}  {}\n", r.count,
                       kernel_time_text(r.total_s), kernel_time_text(r.mean_s),
                       share_text(r.busy_share, 1), kernel_time_text(r.idle_s),
                       share_text(share, 1), cut(r.name, 60));
  }
  if (n.window_idle_s > 0) {
    out += fmt::format("    window idle inside no range: {} of {}{}\n",
                       kernel_time_text(n.unranged_idle_s), kernel_time_text(n.window_idle_s),
                       n.window_clipped ? " (from the oldest range instance kept)" : "");
  }
  if (n.instances_dropped > 0) {
    out += fmt::format(
        "    busy and idle from the most recent instances; {} older ones were not kept\n",
        n.instances_dropped);
  }
}

// Per rank of a multi-process job: its collective time, waiting vs moving data,
// and the rank it waited for longest.
void collective_rank_lines(std::string& out, const std::vector<kernels::RankSplit>& ranks) {
  out += "  collectives per rank (waiting for a peer vs moving data):\n";
  for (const auto& r : ranks) {
    out += fmt::format("    {}: {} waiting, {} moving data", terminal_safe(r.label),
                       kernel_time_text(r.waiting_s), kernel_time_text(r.moving_s));
    if (r.waited_for && *r.waited_for < ranks.size()) {
      out += fmt::format("; waited longest for {} ({})", terminal_safe(ranks[*r.waited_for].label),
                         kernel_time_text(r.waited_for_s));
    }
    if (r.unmatched > 0) {
      out += fmt::format("; {} in {} no other rank shows, not split",
                         kernel_time_text(r.unmatched_s), r.unmatched);
    }
    out += "\n";
  }
}

// Windows against the counters (kernels/reconcile.hpp): per GPU over the job,
// then its phases.
void reconcile_lines(std::string& out, const std::vector<kernels::Reconciliation>& all) {
  for (const auto& r : all) {
    out += "  " + kernels::job_sentence(r) + "\n";
    for (std::size_t i = 0; i < r.phases.size() && i < kernels::kReportedPhases; ++i) {
      out += "    " + terminal_safe(kernels::phase_sentence(r.phases[i])) + "\n";
    }
    if (r.phases.size() > kernels::kReportedPhases) {
      out += fmt::format("    and {} more phases\n", r.phases.size() - kernels::kReportedPhases);
    }
  }
}

std::string kernels_body(const kernels::KernelView& v) {
  std::string out = "Where the GPU time went (gpulens run --kernels)\n";
  if (!v.available) {
    out += "  no kernel view";
    for (const auto& n : v.notes) out += "\n  " + n;
    return out + "\n";
  }
  out += "  " + v.headline + "\n";
  if (v.sampling.sampled) out += "  " + kernels::sampling_sentence(v.sampling) + ".\n";
  reconcile_lines(out, v.reconciliation);
  out += fmt::format("  {} kernel launches, {} of kernel time, {} kernels by name\n", v.launches,
                     kernel_time_text(v.kernel_s), v.kernel_names);
  for (const auto& d : v.devices) {
    if (v.devices.size() > 1)
      out += fmt::format("  device {} {}\n", d.device, terminal_safe(d.name));
    idle_lines(out, d.activity,
               v.sampling.sampled
                   ? fmt::format("the {} of trace windows", kernel_time_text(d.activity.window_s))
                   : fmt::format("the {} from its first to its last work",
                                 kernel_time_text(d.activity.window_s)));
    if (d.steps) {
      idle_lines(out, d.steps->idle,
                 fmt::format("the {} marked steps ({} each)", d.steps->steps,
                             kernel_time_text(d.steps->mean_step_s)));
      if (v.syncs_recorded) {
        out += fmt::format("    per step: {} idle, {:.1f} synchronisations blocking the host {}\n",
                           kernel_time_text(d.steps->mean_idle_per_step_s), d.steps->syncs_per_step,
                           kernel_time_text(d.steps->sync_s_per_step));
      } else {
        out +=
            fmt::format("    per step: {} idle\n", kernel_time_text(d.steps->mean_idle_per_step_s));
      }
    }
  }
  out += fmt::format("  {:>7} {:>8} {:>7} {:>9} {:>9} {:>11} {:>6}  {}\n", "share", "time", "count",
                     "mean", "p99", "SMs busy", "waves", "kernel");
  for (const auto& k : v.top) {
    const std::string sms =
        k.coverage_known ? fmt::format("{}/{}", k.sms_used, k.sms) : std::string("?");
    out += fmt::format("  {:>7} {:>8} {:7} {:>9} {:>9} {:>11} {:6.2f}  {}\n",
                       share_text(k.share, 1), kernel_time_text(k.total_s), k.count,
                       kernel_time_text(k.mean_us / 1e6), kernel_time_text(k.p99_us / 1e6), sms,
                       k.waves, cut(k.short_name, 60) + (k.collective ? "  (communication)" : ""));
  }
  if (!v.copies.empty()) {
    out += "  copies:\n";
    for (const auto& c : v.copies) {
      out += fmt::format("    {} {} -> {}: {}x, {:.1f} MB, {}, {}{}\n", c.kind, c.src, c.dst,
                         c.count, static_cast<double>(c.bytes) / 1e6, kernel_time_text(c.seconds),
                         gb_rate_text(c.gb_per_s), c.pageable ? "  (pageable host memory)" : "");
    }
  }
  if (!v.collective_ranks.empty()) collective_rank_lines(out, v.collective_ranks);
  if (v.nvtx) nvtx_lines(out, *v.nvtx);
  if (v.nvtx && kernels::any_flagged(v.reconciliation)) {
    out += std::string("    ") + kernels::kNvtxWindowsOnly + "\n";
  }
  if (v.syncs_recorded) {
    out += fmt::format("  synchronisations: {} ({} of host time blocked)\n", v.syncs,
                       kernel_time_text(v.sync_s));
  } else {
    out += "  synchronisations: not recorded (see the notes)\n";
  }
  if (!v.findings.empty()) {
    out += "  fixes from the kernel view:\n";
    for (const auto& f : v.findings) out += "  - " + f.text + ": " + f.fix + "\n";
  }
  for (const auto& n : v.notes) out += "  note: " + n + "\n";
  return out;
}

}  // namespace

std::string kernels_to_text(const kernels::KernelView& v) {
  // Every line goes out through terminal_safe_text (names are also cut to one line).
  return terminal_safe_text(kernels_body(v));
}

}  // namespace gpulens::render

// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "core/text_units.hpp"
#include "kernels/view/analysis.hpp"
#include "kernels/view/reconcile.hpp"
#include "render/html_svg.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::render {
namespace {

using html::escape;
using html::num;

// Five bars: the share of the window each gap length holds, with the count.
std::string gap_chart(const kernels::IdleStats& st) {
  const double w = 560, h = 150, bar = 90, left = 20;
  std::string out = fmt::format(
      "<svg viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"idle gaps by length\">",
      num(w), num(h + 40), num(w), num(h + 40));
  for (std::size_t i = 0; i < kernels::kGapLabels.size(); ++i) {
    const double share = st.window_s > 0 ? st.gaps.seconds[i] / st.window_s : 0;
    const double bh = std::max(1.0, share * h);
    const double x = left + static_cast<double>(i) * (bar + 15);
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#c0392b\"><title>{}: {} gaps, "
        "{} idle</title></rect>",
        num(x), num(h - bh + 16), num(bar), num(bh), kernels::kGapLabels[i], st.gaps.count[i],
        kernel_time_text(st.gaps.seconds[i]));
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{} · {}×</text>",
        num(x + bar / 2), num(h - bh + 12), share_text(share, 1), st.gaps.count[i]);
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
                       num(x + bar / 2), num(h + 32), escape(kernels::kGapLabels[i]));
  }
  return out + "</svg>";
}

std::string strip_chart(const kernels::DeviceView& d) {
  const double w = 900, row = 22;
  std::string out = fmt::format(
      "<svg viewBox=\"0 0 {} {}\" width=\"100%\" role=\"img\" aria-label=\"GPU busy in "
      "representative steps\">",
      num(w), num(row * static_cast<double>(d.strips.size()) + 4));
  for (std::size_t i = 0; i < d.strips.size(); ++i) {
    const auto& s = d.strips[i];
    const double y = 2 + row * static_cast<double>(i);
    out += fmt::format(
        "<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#eee\"><title>step of "
        "{}</title></rect>",
        num(y), num(w), num(row - 6), kernel_time_text(s.length_s));
    if (s.length_s <= 0) continue;
    for (const auto& [a, b] : s.busy) {
      const double x0 = a / s.length_s * w;
      const double x1 = std::max(x0 + 0.3, b / s.length_s * w);
      out += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"#2e86c1\"/>", x0,
          num(y), x1 - x0, num(row - 6));
    }
  }
  return out + "</svg>";
}

}  // namespace

std::string kernels_to_html(const kernels::KernelView& v) {
  std::string out = "<section class=\"card\" id=\"kernels\"><h2>Where the GPU time went</h2>";
  if (!v.available) {
    out += "<p>No kernel view.</p><ul class=\"note\">";
    for (const auto& n : v.notes) out += "<li>" + escape(n) + "</li>";
    return out + "</ul></section>";
  }
  out += fmt::format("<p>{} kernel launches, {} of kernel time, {} kernels by name; {}.</p>",
                     v.launches, kernel_time_text(v.kernel_s), v.kernel_names,
                     v.syncs_recorded ? fmt::format("{} synchronisations blocked the host {}",
                                                    v.syncs, kernel_time_text(v.sync_s))
                                      : std::string("synchronisations not recorded"));
  if (v.sampling.sampled) out += "<p>" + escape(kernels::sampling_sentence(v.sampling)) + ".</p>";
  // Windows against the counters (kernels/reconcile.hpp): in bold when they do
  // not stand for the job.
  for (const auto& r : v.reconciliation) {
    const std::string line = escape(kernels::job_sentence(r)) + ".";
    out += r.job.flagged() ? "<p><b>" + line + "</b></p>" : "<p>" + line + "</p>";
    if (r.phases.empty()) continue;
    out += "<ul>";
    for (std::size_t i = 0; i < r.phases.size() && i < kernels::kReportedPhases; ++i) {
      out += "<li>" + escape(kernels::phase_sentence(r.phases[i])) + ".</li>";
    }
    out += "</ul>";
  }
  if (!v.findings.empty()) {
    out += "<ol class=\"fixes\">";
    for (const auto& f : v.findings) {
      out += "<li><b>" + escape(f.text) + "</b>: " + escape(f.fix) + "</li>";
    }
    out += "</ol>";
  }
  for (const auto& d : v.devices) {
    const auto& st = d.steps ? d.steps->idle : d.activity;
    out += fmt::format(
        "<h3>GPU {} idle {} of {}</h3><p>Idle: no kernel, copy or memset on any stream. {}: "
        "{} of {}.{}</p>",
        d.device, share_text(st.idle_share, 1),
        d.steps              ? fmt::format("the {} marked steps", d.steps->steps)
        : v.sampling.sampled ? std::string("the trace windows")
                             : std::string("the run"),
        v.sampling.sampled ? "In the trace windows" : "From the first to the last GPU work",
        share_text(d.activity.idle_share, 1), kernel_time_text(d.activity.window_s),
        d.steps
            ? fmt::format(" Per step of {}: {} idle, {:.1f} synchronisations.",
                          kernel_time_text(d.steps->mean_step_s),
                          kernel_time_text(d.steps->mean_idle_per_step_s), d.steps->syncs_per_step)
            : std::string());
    out += gap_chart(st);
    if (!d.strips.empty()) {
      out += fmt::format(
          "<p>GPU busy (blue) in {} steps of median length (about {} each), each drawn from its "
          "start mark to its end mark:</p>",
          d.strips.size(), kernel_time_text(d.strips.front().length_s));
      out += strip_chart(d);
    }
  }
  out +=
      "<div class=\"scroll\"><table><tr><th>kernel</th><th>share</th><th>time</th><th>count</th>"
      "<th>mean</th><th>p99</th><th>grid × block</th><th>SMs busy</th><th>waves</th></tr>";
  for (const auto& k : v.top) {
    out += fmt::format(
        "<tr><td title=\"{}\"><code>{}</code>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{} × {}</td><td>{}</td><td>{}</td></tr>",
        escape(k.name), escape(k.short_name), k.collective ? " (communication)" : "",
        share_text(k.share, 1), kernel_time_text(k.total_s), k.count,
        kernel_time_text(k.mean_us / 1e6), kernel_time_text(k.p99_us / 1e6), k.blocks, k.threads,
        k.coverage_known ? fmt::format("{} of {}", k.sms_used, k.sms) : "?",
        k.coverage_known ? fmt::format("{:.2f}", k.waves) : "?");
  }
  out += "</table></div>";
  if (!v.copies.empty()) {
    out +=
        "<h3>Copies</h3><table><tr><th>kind</th><th>from → to</th><th>count</th><th>MB</th>"
        "<th>time</th><th>GB/s</th></tr>";
    for (const auto& c : v.copies) {
      out += fmt::format(
          "<tr><td>{}</td><td>{} → "
          "{}{}</td><td>{}</td><td>{:.1f}</td><td>{}</td><td>{:.1f}</td></tr>",
          escape(c.kind), escape(c.src), escape(c.dst), c.pageable ? " <b>(pageable)</b>" : "",
          c.count, static_cast<double>(c.bytes) / 1e6, kernel_time_text(c.seconds), c.gb_per_s);
    }
    out += "</table>";
  }
  if (!v.collective_ranks.empty()) {
    out +=
        "<h3>Collectives per rank</h3><p>Each rank's time in collective kernels, split where the "
        "other ranks' timelines show it: waiting for the last rank to arrive, and moving data "
        "once all had.</p><table><tr><th>rank</th><th>waiting</th><th>moving data</th>"
        "<th>waited longest for</th><th>not split</th></tr>";
    for (const auto& r : v.collective_ranks) {
      const bool named = r.waited_for && *r.waited_for < v.collective_ranks.size();
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", escape(r.label),
          kernel_time_text(r.waiting_s), kernel_time_text(r.moving_s),
          named ? fmt::format("{} ({})", escape(v.collective_ranks[*r.waited_for].label),
                              kernel_time_text(r.waited_for_s))
                : std::string("—"),
          r.unmatched > 0 ? kernel_time_text(r.unmatched_s) : std::string("—"));
    }
    out += "</table>";
  }
  if (v.nvtx) {
    const auto& n = *v.nvtx;
    out +=
        "<h3>NVTX ranges</h3><p>Wall time inside each range, how busy the GPU was inside it, and "
        "the share of the window's idle time for which it was the innermost open range.</p>"
        "<div class=\"scroll\"><table><tr><th>range</th><th>count</th><th>total</th><th>mean</th>"
        "<th>GPU busy</th><th>idle inside</th><th>window idle</th></tr>";
    for (const auto& r : n.ranges) {
      out += fmt::format(
          "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "<td>{}</td><td>{}</td></tr>",
          escape(r.name), r.count, kernel_time_text(r.total_s), kernel_time_text(r.mean_s),
          share_text(r.busy_share, 1), kernel_time_text(r.idle_s),
          share_text(n.window_idle_s > 0 ? r.attributed_idle_s / n.window_idle_s : 0.0, 1));
    }
    out += "</table></div>";
    if (n.window_idle_s > 0) {
      out += fmt::format("<p>Window idle inside no range: {} of {}{}.</p>",
                         kernel_time_text(n.unranged_idle_s), kernel_time_text(n.window_idle_s),
                         n.window_clipped ? " (from the oldest range instance kept)" : "");
    }
    if (kernels::any_flagged(v.reconciliation)) {
      out += "<p>NVTX " + escape(kernels::kNvtxWindowsOnly) + ".</p>";
    }
  }
  if (!v.notes.empty()) {
    out += "<ul class=\"note\">";
    for (const auto& n : v.notes) out += "<li>" + escape(n) + "</li>";
    out += "</ul>";
  }
  return out + "</section>";
}

std::string insert_kernels_html(std::string page, const kernels::KernelView& v) {
  return html::insert_before_script(std::move(page), kernels_to_html(v));
}

}  // namespace gpulens::render

// SPDX-License-Identifier: Apache-2.0
#include "tui/gpu_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "core/text_units.hpp"
#include "tui/cell_text.hpp"

namespace gpulens::tui {
namespace {

// "  util [#####     ] 100%   SM act [#         ]  0.8%"
Line bars_line(const Ctx& c, const GpuView& g) {
  const std::size_t fixed = 2 + 7 + 2 + 6 + 3 + 7 + 2 + 6;
  const std::size_t bw = c.width > fixed + 8 ? (c.width - fixed) / 2 : 4;
  auto b = c.line();
  b.add("  util   ", Style::Dim).add("[").add(bar(g.util, bw, c.utf8), Style::UtilBar).add("]");
  b.add(fmt::format("{:>6}", pct_text(g.util)), Style::Normal);
  b.add("   SM act ", Style::Dim).add("[");
  b.add(bar(g.sm_active, bw, c.utf8), Style::SmBar).add("]");
  b.add(fmt::format("{:>6}", pct_text(g.sm_active, !g.sm_unsupported.empty())), Style::Header);
  return b.done();
}

// Segments in the order they give way when the line is narrow.
Line rates_line(const Ctx& c, const GpuView& g) {
  std::vector<std::pair<std::string, std::string>> parts = {
      {"tensor ", pct_text(g.tensor, !g.sm_unsupported.empty())},
      {"dram ", pct_text(g.dram, !g.sm_unsupported.empty())},
      {"occ ", pct_text(g.occupancy, !g.sm_unsupported.empty())},
      {"PCIe ", rates(g.pcie_rx, g.pcie_tx, c.utf8)},
  };
  if (g.has_nvlink || c.width >= 100) {
    parts.push_back({"NVLink ", rates(g.nvlink_rx, g.nvlink_tx, c.utf8)});
  }
  auto b = c.line();
  b.add("  ");
  for (const auto& [label, value] : parts) {
    if (text_width(label) + text_width(value) + 2 > b.left()) break;
    b.add(label, Style::Dim).add(value).add("  ");
  }
  return b.done();
}

Line power_line(const Ctx& c, const GpuView& g) {
  auto b = c.line();
  b.add("  mem ", Style::Dim).add(num(g.mem_used) + "/" + num(g.mem_total) + " MiB");
  b.add("  power ", Style::Dim).add(num(g.power) + "/" + num(g.power_limit) + " W");
  b.add("  temp ", Style::Dim).add(num(g.temp) + (c.utf8 ? "\u00b0C" : " C"));
  b.add("  SM clock ", Style::Dim).add(num(g.sm_clock) + " MHz");
  if (!g.clock_reason.empty()) b.add(" " + g.clock_reason, g.throttled ? Style::Warn : Style::Dim);
  if (g.throttled && !g.throttle_cause.empty()) {
    b.add("  throttled: " + g.throttle_cause, Style::Warn);
  }
  return b.done();
}

// One MIG GPU instance, indented under its GPU: its id (NVML's GPU instance id; the
// profile is not recorded) and the GPM metrics read for it, as far as they fit.
Line mig_line(const Ctx& c, const MigView& m) {
  std::vector<std::pair<std::string, std::string>> parts = {
      {"SM act ", pct_text(m.sm_active)},
      {"occ ", pct_text(m.occupancy)},
      {"tensor ", pct_text(m.tensor)},
      {"dram ", pct_text(m.dram)},
  };
  if (m.fp64) parts.push_back({"fp64 ", pct_text(m.fp64)});
  if (m.fp32) parts.push_back({"fp32 ", pct_text(m.fp32)});
  if (m.fp16) parts.push_back({"fp16 ", pct_text(m.fp16)});
  if (m.pcie_rx || m.pcie_tx) parts.push_back({"PCIe ", rates(m.pcie_rx, m.pcie_tx, c.utf8)});
  if (m.nvlink_rx || m.nvlink_tx) {
    parts.push_back({"NVLink ", rates(m.nvlink_rx, m.nvlink_tx, c.utf8)});
  }
  auto b = c.line();
  b.add(fmt::format("    MIG GI {:<3}", m.gpu_instance), Style::Header).add(" ");
  for (const auto& [label, value] : parts) {
    if (text_width(label) + text_width(value) + 2 > b.left()) break;
    b.add(label, Style::Dim).add(value, label == "SM act " ? Style::Header : Style::Normal);
    b.add("  ");
  }
  return b.done();
}

Line gpu_head_line(const Ctx& c, const GpuView& g) {
  auto b = c.line();
  b.add(fmt::format("GPU {}", g.index), Style::Header).add("  ").add(g.name, Style::Header);
  // Whose the GPU is, by Slurm's allocation, where the line has room beside the state.
  const std::size_t state_room = g.state.empty() ? 0 : text_width(state_label(g)) + 4;
  if (!g.held_by.empty() && b.left() > text_width(g.held_by) + 2 + state_room) {
    b.add("  " + g.held_by, Style::Dim);
  }
  if (!g.state.empty()) {
    std::string st = state_label(g);
    std::string tail =
        "  " + g.confidence_level + " confidence, for " + duration_compact(g.state_for_s) + " ";
    if (b.left() > text_width(st) + text_width(tail) + 3) {
      b.right(st + tail, state_style(g));
    } else {
      b.right(st + " ", state_style(g));
    }
  }
  return b.done(Style::Normal);
}

// A labelled sentence over at most `max_lines` lines, continuation lines indented
// under the text.
std::vector<Line> labelled_lines(const Ctx& c, const std::string& label, const std::string& text,
                                 Style style, std::size_t max_lines) {
  const std::size_t indent = text_width(label);
  const std::size_t room = c.width > indent + 4 ? c.width - indent : 4;
  std::vector<Line> out;
  for (const auto& piece : wrap(text, room, max_lines, c.utf8)) {
    auto b = c.line();
    b.add(out.empty() ? label : std::string(indent, ' '), Style::Dim).add(piece, style);
    out.push_back(b.done());
  }
  return out;
}

std::vector<Line> why_lines(const Ctx& c, const GpuView& g, std::size_t max_lines) {
  std::string text = g.summary.empty() ? g.state_words : g.summary;
  if (!g.sm_unsupported.empty() && !g.sm_active) {
    text = "SM activity n/a: " + g.sm_unsupported + ". " + text;
  }
  return labelled_lines(c, "  why ", text, state_style(g), max_lines);
}

std::vector<Line> fix_lines(const Ctx& c, const GpuView& g, std::size_t max_lines) {
  return labelled_lines(c, "  fix ", g.fix.empty() ? "nothing to change" : g.fix, Style::Normal,
                        max_lines);
}

std::string history_span(const Ctx& c, std::size_t columns, std::size_t samples) {
  const std::size_t shown = std::min(columns, samples);
  return duration_compact(static_cast<double>(shown) * c.model.interval_s);
}

std::vector<Line> spark_lines(const Ctx& c, const GpuView& g) {
  std::vector<Line> out;
  const std::string span =
      "last " + history_span(c, c.width > 24 ? c.width - 24 : 1, g.util_history.size());
  const std::size_t sw = c.width > 11 + span.size() + 3 ? c.width - 11 - span.size() - 3 : 1;
  auto u = c.line();
  u.add("  util   ", Style::Dim).add(sparkline(g.util_history, sw, c.utf8), Style::UtilBar);
  u.add("  " + span, Style::Dim);
  out.push_back(u.done());
  auto s = c.line();
  s.add("  SM act ", Style::Dim).add(sparkline(g.sm_history, sw, c.utf8), Style::SmBar);
  out.push_back(s.done());
  return out;
}

// Compact: one line per GPU.
struct CompactCols {
  std::size_t bar = 0;
  bool name = true;  // GPU names: from 100 columns (a node's GPUs are mostly alike)
};

CompactCols compact_cols(std::size_t width) {
  CompactCols cols;
  cols.name = width >= 100;
  // index (and name), two bars with brackets and numbers 2 x (bar + 9), memory 12,
  // power 7, temperature 5, the state at least 18.
  const std::size_t fixed = (cols.name ? 14 : 5) + 18 + 12 + 7 + 5 + 18;
  cols.bar = width > fixed + 6 ? std::min<std::size_t>((width - fixed) / 2, 30) : 3;
  return cols;
}

Line compact_header(const Ctx& c) {
  const auto cols = compact_cols(c.width);
  auto b = c.line();
  b.add(cols.name ? " GPU NAME     " : " GPU ", Style::Header);
  b.add(fit("UTIL", cols.bar + 9), Style::Header).add(fit("SM ACT", cols.bar + 9), Style::Header);
  b.add(fmt::format("{:>10}  {:>5}  {:>4} ", "MEM GiB", "POWER", "TEMP"), Style::Header);
  b.add("STATE", Style::Header);
  return b.done(Style::Header, true);
}

Line compact_line(const Ctx& c, const GpuView& g) {
  const auto cols = compact_cols(c.width);
  auto b = c.line();
  b.add(fmt::format("{:>4} ", g.index), Style::Header);
  if (cols.name) b.add(fit(short_name(g.name), 9));
  b.add("[").add(bar(g.util, cols.bar, c.utf8), Style::UtilBar).add("]");
  b.add(fmt::format("{:>6} ", pct_text(g.util)));
  b.add("[").add(bar(g.sm_active, cols.bar, c.utf8), Style::SmBar).add("]");
  b.add(fmt::format("{:>6} ", pct_text(g.sm_active, !g.sm_unsupported.empty())), Style::Header);
  b.add(fmt::format("{:>10}  {:>4}W  {:>3}{} ", gib(g.mem_used) + "/" + gib(g.mem_total),
                    num(g.power), num(g.temp), "C"));
  b.add(state_label(g), state_style(g));
  if (!g.summary.empty() && b.left() > 20) b.add("  " + g.summary, Style::Dim);
  return b.done();
}

Line compact_why(const Ctx& c, const GpuView& g) {
  auto b = c.line();
  b.add(fmt::format("{:>4} ", g.index), Style::Dim);
  b.add(g.state_words.empty() ? "" : g.state_words, state_style(g));
  if (!g.fix.empty()) b.add("; fix: ", Style::Dim).add(g.fix);
  return b.done();
}

}  // namespace

std::size_t mig_rows(const TopModel& model) {
  std::size_t n = 0;
  for (const auto& g : model.gpus) n += g.mig.size();
  return n;
}

std::vector<Line> full_gpu_lines(const Ctx& c, std::size_t body) {
  const TopModel& model = c.model;
  const std::size_t n = std::max<std::size_t>(model.gpus.size(), 1);
  const std::size_t base = model.diagnosis ? 6 : 4;
  // Rows kept for the table: its heading and the processes, 3 to 10 of them.
  const std::size_t table = std::clamp<std::size_t>(model.procs.size() + 1, 4, 11);
  // Extras in order of worth: alerts, sparklines, then the why and the fix wrapped
  // over more lines.
  const std::size_t fixed = n * base + mig_rows(model) + table;
  std::size_t spare = body > fixed ? body - fixed : 0;
  std::size_t alert_lines = 0;
  for (const auto& g : model.gpus) alert_lines += std::min<std::size_t>(g.alerts.size(), 2);
  const bool show_alerts = alert_lines <= spare;
  if (show_alerts) spare -= alert_lines;
  const bool show_spark = n * 2 <= spare;
  if (show_spark) spare -= n * 2;
  const std::size_t wrap_extra = std::min<std::size_t>(spare / n, 4);
  std::vector<Line> out;
  const auto append = [&out](std::vector<Line> lines) {
    for (auto& l : lines) out.push_back(std::move(l));
  };
  for (const auto& g : model.gpus) {
    out.push_back(gpu_head_line(c, g));
    out.push_back(bars_line(c, g));
    out.push_back(rates_line(c, g));
    out.push_back(power_line(c, g));
    for (const auto& m : g.mig) out.push_back(mig_line(c, m));
    if (show_spark) append(spark_lines(c, g));
    if (model.diagnosis) {
      append(why_lines(c, g, 1 + (wrap_extra + 1) / 2));
      append(fix_lines(c, g, 1 + wrap_extra / 2));
    }
    if (show_alerts) {
      for (std::size_t i = 0; i < std::min<std::size_t>(g.alerts.size(), 2); ++i) {
        out.push_back(c.line().add("  ! ", Style::Bad).add(g.alerts[i], Style::Bad).done());
      }
    }
  }
  return out;
}

std::vector<Line> compact_gpu_lines(const Ctx& c, std::size_t body) {
  const TopModel& model = c.model;
  std::vector<Line> out;
  out.push_back(compact_header(c));
  for (const auto& g : model.gpus) {
    out.push_back(compact_line(c, g));
    for (const auto& m : g.mig) out.push_back(mig_line(c, m));
  }
  // The state in words and the fix, when the table still keeps four rows.
  if (model.diagnosis && body >= out.size() + model.gpus.size() + 4) {
    for (const auto& g : model.gpus) out.push_back(compact_why(c, g));
  }
  return out;
}

}  // namespace gpulens::tui

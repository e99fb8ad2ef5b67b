// SPDX-License-Identifier: Apache-2.0
#include "tui/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>

#include "core/text_safety.hpp"
#include "core/text_units.hpp"

namespace gpulens::tui {

Style state_style_of(GpuState state) {
  static_assert(static_cast<int>(Style::StateWaitingOnPeer) -
                    static_cast<int>(Style::StateUnknown) + 1 ==
                static_cast<int>(kGpuStateCount));
  return static_cast<Style>(static_cast<int>(Style::StateUnknown) +
                            static_cast<int>(state_index(state)));
}

namespace {

bool is_continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// Builds one line, never wider than the screen. Every span of every screen comes
// through add(), which makes its text terminal_safe first: process, user, host and
// GPU names are chosen by others, and the width is counted on what is shown.
class LineBuilder {
 public:
  explicit LineBuilder(std::size_t width, bool utf8) : width_(width), utf8_(utf8) {}
  LineBuilder& add(std::string_view raw, Style style = Style::Normal) {
    if (used_ >= width_ || raw.empty()) return *this;
    const std::string text = terminal_safe(raw);
    const std::size_t w = text_width(text);
    std::string piece = w <= width_ - used_ ? std::string(text) : fit(text, width_ - used_, utf8_);
    used_ += text_width(piece);
    if (!line_.spans.empty() && line_.spans.back().style == style) {
      line_.spans.back().text += piece;
    } else {
      line_.spans.push_back({std::move(piece), style});
    }
    return *this;
  }
  // Spaces up to column `col`.
  LineBuilder& to(std::size_t col, Style style = Style::Normal) {
    if (col > used_) add(std::string(std::min(col, width_) - used_, ' '), style);
    return *this;
  }
  // Right-aligns `text` at the end of the line, when it fits beside what is there.
  LineBuilder& right(std::string_view text, Style style, Style fill = Style::Normal) {
    const std::size_t w = text_width(text);
    if (used_ + w + 1 > width_) return *this;
    to(width_ - w, fill);
    return add(text, style);
  }
  std::size_t used() const { return used_; }
  std::size_t left() const { return width_ - used_; }
  Line done(Style pad = Style::Normal, bool fill = false) {
    if (fill) to(width_, pad);
    return std::move(line_);
  }

 private:
  std::size_t width_;
  bool utf8_;
  std::size_t used_ = 0;
  Line line_;
};

std::string pct_text(std::optional<double> v, bool unsupported = false) {
  if (!v) return unsupported ? "n/a" : "-";
  return points_compact(*v);
}

std::string num(std::optional<double> v, const char* spec = "{:.0f}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

// "↓14 ↑5 MiB/s", "↓1.2 ↑0.0 GiB/s": one unit for both directions.
std::string rates(std::optional<double> rx, std::optional<double> tx, bool utf8) {
  const bool gib = std::max(rx.value_or(0), tx.value_or(0)) >= 10240;
  auto one = [gib](std::optional<double> v) {
    if (!v) return std::string("-");
    return gib ? fmt::format("{:.1f}", *v / 1024) : fmt::format("{:.0f}", *v);
  };
  return std::string(utf8 ? "\u2193" : "rx ") + one(rx) + (utf8 ? " \u2191" : " tx ") + one(tx) +
         (gib ? " GiB/s" : " MiB/s");
}

std::string gib(std::optional<double> mib) {
  if (!mib) return "-";
  return fmt::format("{:.1f}", *mib / 1024);
}

std::string mib_short(std::optional<double> mib) {
  if (!mib) return "-";
  if (*mib >= 10240) return fmt::format("{:.1f}G", *mib / 1024);
  return fmt::format("{:.0f}M", *mib);
}

// "NVIDIA H100 80GB HBM3" -> "H100".
std::string short_name(const std::string& name) {
  std::string s = name;
  for (const char* prefix : {"NVIDIA ", "Tesla "}) {
    if (s.rfind(prefix, 0) == 0) s = s.substr(std::strlen(prefix));
  }
  const auto space = s.find(' ');
  return space == std::string::npos ? s : s.substr(0, space);
}

// A critical alert outranks the state; otherwise each state has its own colour,
// the one the dashboard and the HTML report use.
Style state_style(const GpuView& g) {
  if (g.critical) return Style::Bad;
  const auto state = state_from_id(g.state);
  if (!state) return Style::Dim;
  return state_style_of(*state);
}

std::string state_label(const GpuView& g) {
  if (g.state.empty()) return "";
  std::string s = g.state;
  if (g.throttled) s += "+thr";
  if (!g.alerts.empty()) s += " !";
  return s;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGKILL:
      return "SIGKILL";
    case SIGINT:
      return "SIGINT";
    default:
      return "signal";
  }
}

std::string clock_text(time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

struct Ctx {
  const TopModel& model;
  const ViewState& view;
  std::size_t width;
  bool utf8;
  LineBuilder line() const { return LineBuilder(width, utf8); }
};

Line title_line(const Ctx& c, const FeedStatus& feed) {
  auto b = c.line();
  b.add(" gpulens top", Style::Title);
  std::string info;
  if (!c.model.host.empty()) info += "  " + c.model.host;
  if (!c.model.driver.empty()) info += "  driver " + c.model.driver;
  info += fmt::format("  {} GPU{}", c.model.gpus.size(), c.model.gpus.size() == 1 ? "" : "s");
  b.add(info, Style::Title);
  std::string status;
  if (!feed.error.empty()) {
    status = "error: " + feed.error;
  } else if (!feed.live && feed.first_t && feed.last_t) {
    // Which moment of the recording: in words where they fit, else in short.
    const std::string clock = clock_text(static_cast<time_t>(c.model.t));
    const std::string length = duration_compact(*feed.last_t - *feed.first_t);
    const bool end = c.model.t >= *feed.last_t;
    const std::string into = duration_compact(c.model.t - *feed.first_t);
    status = end ? "at " + clock + ", the end of the recording (" + length + ")"
                 : "at " + clock + ", " + into + " into the recording of " + length;
    if (b.used() + text_width(status) + 2 > c.width) {
      status = clock + (end ? "  end of recording" : "  " + into + " of " + length);
    }
  } else {
    if (c.model.t > 0) status = clock_text(static_cast<time_t>(c.model.t));
    if (!feed.live) {
      if (feed.ended) {
        status += "  end of recording";
      } else if (feed.speed == 0) {
        status += "  replay";
      } else {
        status += fmt::format("  replay x{:g}", feed.speed);
      }
    }
  }
  b.right(status + " ", Style::Title, Style::Title);
  return b.done(Style::Title, true);
}

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

std::size_t mig_rows(const TopModel& model) {
  std::size_t n = 0;
  for (const auto& g : model.gpus) n += g.mig.size();
  return n;
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

struct ProcCols {
  bool container = false;
};

Line proc_header(const Ctx& c, const ProcCols& cols, std::size_t shown, std::size_t total,
                 TableHits& hits) {
  auto b = c.line();
  const char* arrow = c.view.descending ? (c.utf8 ? "\u25bc" : "v") : (c.utf8 ? "\u25b2" : "^");
  auto head = [&](SortKey k, std::string text, int w) {
    if (k == c.view.sort) text += arrow;
    const std::string cell =
        w < 0 ? fmt::format("{:<{}}", text, -w) : fmt::format("{:>{}}", text, w);
    b.add(cell, k == c.view.sort ? Style::Selected : Style::Header);
    b.add(" ", Style::Header);
    hits.heads.emplace_back(b.used(), k);
  };
  head(SortKey::Pid, "PID", 7);
  head(SortKey::User, "USER", -8);
  head(SortKey::Gpu, "GPU", 4);
  head(SortKey::Mem, "GPU-MEM", 8);
  head(SortKey::Sm, "SM%", 5);
  head(SortKey::Cpu, "CPU%", 6);
  head(SortKey::Rss, "RSS", 7);
  if (cols.container) head(SortKey::Container, "CONTAINER", -12);
  head(SortKey::Command, "COMMAND", -8);
  std::string count = shown == total ? fmt::format("{} processes", total)
                                     : fmt::format("{} of {} processes", shown, total);
  if (!c.view.filter.empty()) count += " matching '" + c.view.filter + "'";
  b.right(count + " ", Style::Header, Style::Header);
  return b.done(Style::Header, true);
}

Line proc_line(const Ctx& c, const ProcCols& cols, const ProcView& p, bool selected) {
  auto b = c.line();
  const Style st = selected ? Style::Selected : Style::Normal;
  b.add(fmt::format("{:>7} {:<8} {:>4} {:>8} {:>5} {:>6} {:>7} ", p.pid, fit(p.user, 8, c.utf8),
                    p.gpu, p.mem_mib ? num(p.mem_mib) + "MiB" : "-", num(p.sm_pct),
                    num(p.cpu_pct, "{:.1f}"), mib_short(p.rss_mib)),
        st);
  if (cols.container) b.add(fit(p.container, 12, c.utf8) + " ", st);
  b.add(p.command, st);
  return b.done(st, selected);
}

Line footer_line(const Ctx& c) {
  auto b = c.line();
  const ViewState& v = c.view;
  if (v.confirm) {
    b.add(fmt::format(" Send {} to PID {} ({}) on GPU {}? y/n ", signal_name(v.confirm->signal),
                      v.confirm->pid, v.confirm->command, v.confirm->gpu),
          Style::Bad);
    return b.done(Style::Bad, true);
  }
  if (v.editing_filter) {
    b.add(" filter: ", Style::Footer).add(v.filter_draft + "_", Style::Footer);
    b.add("   Enter keep  Esc clear", Style::Footer);
    return b.done(Style::Footer, true);
  }
  if (!v.message.empty()) b.add(" " + v.message + " ", Style::Warn);
  const char* arrows = c.utf8 ? "\u2191\u2193" : "j/k";
  b.add(fmt::format(" q quit  ? help  / filter  <> sort  r reverse  {} select  T/K/I signal  "
                    "c view",
                    arrows),
        Style::Footer);
  return b.done(Style::Footer, true);
}

std::vector<Line> help_lines(const Ctx& c) {
  const std::string signal_keys =
      c.view.signals_off.empty()
          ? "send SIGTERM / SIGKILL / SIGINT to the selected process, after y/n"
          : "off: " + c.view.signals_off;
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"q", "quit"},
      {"?  h", "this help (any key closes it)"},
      {"/", "filter processes by text (PID, user, command, container; Enter keeps, Esc clears)"},
      {"<  >  ,  .", "sort by the previous / next column"},
      {"r", "reverse the sort order"},
      {"Up Down j k", "select a process (PgUp PgDn Home End)"},
      {"T  K  I", signal_keys},
      {"c  a", "compact (one line per GPU) or full view; a = choose by terminal size"},
      {"Esc", "clear the filter and the selection"},
  };
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"util", "NVML utilization: share of time any kernel ran (the classic number)"},
      {"SM act", "GPM SM activity: share of the SMs that worked. 1 busy SM of 132 reads 0.8 %"},
      {"tensor dram occ", "tensor pipes busy, DRAM bandwidth used, warps resident"},
      {"state", "what holds the GPU back, from the same engine as stream and diagnose"},
      {"+thr", "clocks held down by power or heat (reason after the SM clock)"},
      {"!", "an alert is firing; its message is listed under the GPU"},
  };
  std::vector<Line> out;
  out.push_back(c.line().add(" Keys", Style::Header).done(Style::Header, true));
  for (const auto& [k, what] : keys) {
    out.push_back(c.line().add(fmt::format("  {:<14}", k), Style::Header).add(what).done());
  }
  out.push_back(Line{});
  out.push_back(c.line().add(" Columns", Style::Header).done(Style::Header, true));
  for (const auto& [k, what] : columns) {
    out.push_back(c.line().add(fmt::format("  {:<16}", k), Style::Header).add(what).done());
  }
  out.push_back(Line{});
  out.push_back(c.line()
                    .add("  Colours follow NO_COLOR; --ascii avoids block glyphs. Any key returns.",
                         Style::Dim)
                    .done());
  return out;
}

bool use_full(const Ctx& c, std::size_t body_rows) {
  if (c.view.density == Density::Compact) return false;
  if (c.view.density == Density::Full) return true;
  const std::size_t n = std::max<std::size_t>(c.model.gpus.size(), 1);
  const std::size_t min_procs = 4;  // heading and three rows
  return c.width >= 60 && n * 6 + mig_rows(c.model) + min_procs <= body_rows;
}

}  // namespace

std::string Line::text() const {
  std::string s;
  for (const auto& span : spans) append_terminal_safe(s, span.text, false);
  return s;
}

std::size_t text_width(std::string_view s) {
  std::size_t n = 0;
  for (const char ch : s) {
    if (!is_continuation(static_cast<unsigned char>(ch))) ++n;
  }
  return n;
}

std::string fit(std::string_view s, std::size_t width, bool utf8) {
  const std::size_t w = text_width(s);
  if (w <= width) return std::string(s) + std::string(width - w, ' ');
  if (width == 0) return "";
  // Keep width-1 code points, then the ellipsis.
  std::size_t kept = 0, i = 0;
  while (i < s.size()) {
    if (!is_continuation(static_cast<unsigned char>(s[i]))) {
      if (kept == width - 1) break;
      ++kept;
    }
    ++i;
  }
  return std::string(s.substr(0, i)) + (utf8 ? "\u2026" : "~");
}

std::vector<std::string> wrap(std::string_view text, std::size_t width, std::size_t max_lines,
                              bool utf8) {
  std::vector<std::string> lines;
  if (width == 0 || max_lines == 0) return lines;
  std::string current;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t space = text.find(' ', pos);
    const std::string_view word =
        text.substr(pos, space == std::string_view::npos ? std::string_view::npos : space - pos);
    pos = space == std::string_view::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    const std::size_t need = text_width(current) + (current.empty() ? 0 : 1) + text_width(word);
    if (!current.empty() && need > width) {
      lines.push_back(current);
      current.clear();
      if (lines.size() == max_lines) {
        // Out of lines: the last one shows that more was cut.
        std::string& last = lines.back();
        last =
            fit(last + " " + std::string(word) + " " + std::string(text.substr(pos)), width, utf8);
        while (!last.empty() && last.back() == ' ') last.pop_back();
        return lines;
      }
    }
    if (!current.empty()) current += ' ';
    current += word;
  }
  if (!current.empty())
    lines.push_back(text_width(current) > width ? fit(current, width, utf8) : current);
  return lines;
}

std::string bar(std::optional<double> pct, std::size_t width, bool utf8) {
  const double v = std::clamp(pct.value_or(0), 0.0, 100.0);
  if (!utf8) {
    auto n = static_cast<std::size_t>(std::lround(v / 100.0 * static_cast<double>(width)));
    if (v > 0 && n == 0) n = 1;  // any activity shows
    return std::string(n, '#') + std::string(width - n, ' ');
  }
  static constexpr const char* partial[] = {"",       "\u258f", "\u258e", "\u258d",
                                            "\u258c", "\u258b", "\u258a", "\u2589"};
  auto eighths = static_cast<std::size_t>(std::lround(v / 100.0 * static_cast<double>(width * 8)));
  if (v > 0 && eighths == 0) eighths = 1;
  std::string out;
  const std::size_t full = eighths / 8;
  for (std::size_t i = 0; i < full; ++i) out += "\u2588";
  std::size_t cells = full;
  if (eighths % 8 != 0 && cells < width) {
    out += partial[eighths % 8];
    ++cells;
  }
  out += std::string(width - cells, ' ');
  return out;
}

std::string sparkline(const std::deque<std::optional<double>>& history, std::size_t width,
                      bool utf8) {
  static constexpr const char* blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                           "\u2585", "\u2586", "\u2587", "\u2588"};
  static constexpr const char ascii[] = "_.-:=+*#";
  std::string out;
  const std::size_t n = std::min(width, history.size());
  out += std::string(width - n, ' ');  // the newest value sits at the right edge
  for (std::size_t i = history.size() - n; i < history.size(); ++i) {
    const auto& v = history[i];
    if (!v) {
      out += ' ';
      continue;
    }
    const auto level = static_cast<std::size_t>(std::clamp(*v, 0.0, 100.0) / 100.0 * 7.0 + 0.5);
    if (utf8) {
      out += blocks[level];
    } else {
      out += ascii[level];
    }
  }
  return out;
}

Screen layout_top(const TopModel& model, const ViewState& view, const FeedStatus& feed, int width,
                  int height, TerminalCaps caps) {
  Screen screen;
  screen.width = std::max(width, 1);
  screen.height = std::max(height, 1);
  const Ctx c{model, view, static_cast<std::size_t>(screen.width), caps.utf8};
  auto& lines = screen.lines;
  const auto rows = static_cast<std::size_t>(screen.height);
  lines.push_back(title_line(c, feed));
  if (rows < 3) return screen;
  const std::size_t body = rows - 2;  // title and footer
  if (view.help) {
    for (auto& l : help_lines(c)) {
      if (lines.size() >= rows - 1) break;
      lines.push_back(std::move(l));
    }
  } else {
    const bool full = use_full(c, body);
    std::size_t gpu_rows = 0;
    std::vector<Line> gpu_lines;
    if (full) {
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
      for (const auto& g : model.gpus) {
        gpu_lines.push_back(gpu_head_line(c, g));
        gpu_lines.push_back(bars_line(c, g));
        gpu_lines.push_back(rates_line(c, g));
        gpu_lines.push_back(power_line(c, g));
        for (const auto& m : g.mig) gpu_lines.push_back(mig_line(c, m));
        if (show_spark) {
          for (auto& l : spark_lines(c, g)) gpu_lines.push_back(std::move(l));
        }
        if (model.diagnosis) {
          for (auto& l : why_lines(c, g, 1 + (wrap_extra + 1) / 2))
            gpu_lines.push_back(std::move(l));
          for (auto& l : fix_lines(c, g, 1 + wrap_extra / 2)) gpu_lines.push_back(std::move(l));
        }
        if (show_alerts) {
          for (std::size_t i = 0; i < std::min<std::size_t>(g.alerts.size(), 2); ++i) {
            gpu_lines.push_back(
                c.line().add("  ! ", Style::Bad).add(g.alerts[i], Style::Bad).done());
          }
        }
      }
    } else {
      gpu_lines.push_back(compact_header(c));
      for (const auto& g : model.gpus) {
        gpu_lines.push_back(compact_line(c, g));
        for (const auto& m : g.mig) gpu_lines.push_back(mig_line(c, m));
      }
      // The state in words and the fix, when the table still keeps four rows.
      const std::size_t used = gpu_lines.size();
      if (model.diagnosis && body >= used + model.gpus.size() + 4) {
        for (const auto& g : model.gpus) gpu_lines.push_back(compact_why(c, g));
      }
    }
    gpu_rows = std::min(gpu_lines.size(), body);
    for (std::size_t i = 0; i < gpu_rows; ++i) lines.push_back(std::move(gpu_lines[i]));
    // The process table takes what is left.
    if (body > gpu_rows + 1) {
      const auto procs = visible_processes(model.procs, view);
      ProcCols cols;
      cols.container = std::any_of(model.procs.begin(), model.procs.end(),
                                   [](const ProcView& p) { return !p.container.empty(); });
      const std::size_t table_rows = body - gpu_rows - 1;
      screen.table.heading_row = static_cast<int>(lines.size());
      lines.push_back(proc_header(c, cols, procs.size(), model.procs.size(), screen.table));
      std::size_t selected = procs.size();
      for (std::size_t i = 0; i < procs.size(); ++i) {
        if (view.selected_pid && procs[i].pid == *view.selected_pid) selected = i;
      }
      // Scroll so that the selected row is on screen.
      std::size_t first = 0;
      if (selected < procs.size() && selected >= table_rows) first = selected - table_rows + 1;
      for (std::size_t i = first; i < procs.size() && i < first + table_rows; ++i) {
        lines.push_back(proc_line(c, cols, procs[i], i == selected));
        screen.table.row_pids.push_back(procs[i].pid);
      }
      if (procs.empty()) {
        const std::string none = !model.procs.empty() ? "  no process matches the filter"
                                 : model.procs_listed
                                     ? "  no processes on these GPUs"
                                     : "  processes not listed (yet, or --no-procs)";
        lines.push_back(c.line().add(none, Style::Dim).done());
      }
    }
  }
  while (lines.size() < rows - 1) lines.push_back(Line{});
  lines.push_back(footer_line(c));
  return screen;
}

KeyAction click(ViewState& view, const Screen& screen, int x, int y) {
  const TableHits& t = screen.table;
  if (t.heading_row < 0 || y < t.heading_row || view.help || view.confirm) return {};
  if (y == t.heading_row) {
    for (const auto& [end, k] : t.heads) {
      if (static_cast<std::size_t>(std::max(x, 0)) < end) {
        if (view.sort == k) {
          view.descending = !view.descending;
        } else {
          view.sort = k;
        }
        return {KeyAction::Redraw, {}};
      }
    }
    return {};
  }
  const auto row = static_cast<std::size_t>(y - t.heading_row - 1);
  if (row >= t.row_pids.size()) return {};
  view.selected_pid = t.row_pids[row];
  return {KeyAction::Redraw, {}};
}

std::string screen_text(const Screen& screen) {
  std::string out;
  for (const auto& line : screen.lines) {
    std::string t = line.text();
    while (!t.empty() && t.back() == ' ') t.pop_back();
    out += t;
    out += '\n';
  }
  return out;
}

}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
// The per-GPU time series of the HTML report: activity (classic utilization
// against SM, tensor and DRAM activity) over a band coloured by state, and
// memory and power. Values for the hover read-out go to a JSON object that the
// page's small script reads; the SVG alone is complete without it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "render/html_svg.hpp"
#include "verdict/state_words.hpp"

namespace gpulens::render::html {
namespace {

struct Frame {
  double w, h, left, right, top, bottom;
  double x(double t, double span) const { return left + (right - left) * t / span; }
  double y(double v, double vmax) const {
    return bottom - (bottom - top) * std::clamp(v / vmax, 0.0, 1.0);
  }
};

// 1, 2 or 5 x 10^k seconds (or whole minutes and hours) giving about `target` ticks.
double tick_step(double span, int target) {
  const double raw = span / std::max(1, target);
  const double steps[] = {1,   2,    5,    10,   15,    30,    60,    120,   300,   600,
                          900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800};
  for (double s : steps) {
    if (s >= raw) return s;
  }
  return 86400 * std::ceil(raw / 86400);
}

std::string path(const std::vector<double>& t, const std::vector<std::optional<double>>& v,
                 const Frame& f, double span, double vmax) {
  std::string d;
  bool pen = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!v[i]) {
      pen = false;
      continue;
    }
    d += fmt::format("{}{} {}", pen ? "L" : "M", num(f.x(t[i], span)), num(f.y(*v[i], vmax)));
    pen = true;
  }
  return d;
}

// The same line closed down to the axis, for a filled area.
std::string area(const std::vector<double>& t, const std::vector<std::optional<double>>& v,
                 const Frame& f, double span, double vmax) {
  std::string d;
  std::optional<double> run_start;
  double last_x = 0;
  for (std::size_t i = 0; i <= t.size(); ++i) {
    const bool have = i < t.size() && v[i].has_value();
    if (have) {
      const double x = f.x(t[i], span);
      if (!run_start) {
        d += fmt::format("M{} {}", num(x), num(f.bottom));
        run_start = x;
      }
      d += fmt::format("L{} {}", num(x), num(f.y(*v[i], vmax)));
      last_x = x;
    } else if (run_start) {
      d += fmt::format("L{} {}Z", num(last_x), num(f.bottom));
      run_start.reset();
    }
  }
  return d;
}

std::string time_axis(const Frame& f, double span, double label_y) {
  std::string out;
  const double step = tick_step(span, 8);
  for (double t = 0; t <= span + 1e-9; t += step) {
    const double x = f.x(t, span);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"grid\"/>", num(x),
                       num(f.top), num(x), num(f.bottom));
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text>",
                       num(x), num(label_y), clock_label(t));
  }
  return out;
}

std::string value_axis(const Frame& f, double vmax, int ticks, const std::string& unit) {
  std::string out;
  for (int i = 0; i <= ticks; ++i) {
    const double v = vmax * i / ticks;
    const double y = f.y(v, vmax);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"grid\"/>",
                       num(f.left), num(y), num(f.right), num(y));
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"end\">{}{}</text>",
                       num(f.left - 6), num(y + 4), num(v), unit);
  }
  return out;
}

// A round axis maximum: 4 x (1, 2, 2.5 or 5 x 10^k), at least `v`.
double nice_max(double v) {
  const double quarter = std::max(v, 1e-9) / 4;
  const double mag = std::pow(10.0, std::floor(std::log10(quarter)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= quarter - 1e-12) return 4 * m * mag;
  }
  return 40 * mag;
}

nlohmann::json column(const char* name, const char* color, const char* unit,
                      const std::vector<std::optional<double>>& v, int decimals) {
  nlohmann::json values = nlohmann::json::array();
  const double k = std::pow(10.0, decimals);
  for (const auto& x : v) values.push_back(x ? nlohmann::json(std::round(*x * k) / k) : nullptr);
  return {{"n", name}, {"c", color}, {"u", unit}, {"v", std::move(values)}};
}

nlohmann::json hover_frame(const Series& s, const Frame& f) {
  nlohmann::json px = nlohmann::json::array();
  nlohmann::json t = nlohmann::json::array();
  for (double x : s.t) {
    px.push_back(std::round(f.x(x, s.span) * 10) / 10);
    t.push_back(std::round(x * 10) / 10);
  }
  return {{"w", f.w}, {"px", std::move(px)}, {"t", std::move(t)}};
}

std::string open_svg(const Frame& f, const std::string& id, const char* cls, const char* label) {
  return fmt::format(
      "<svg class=\"chart {}\" viewBox=\"0 0 {} {}\" data-hover=\"{}\" role=\"img\" "
      "aria-label=\"{}\">",
      cls, num(f.w), num(f.h), escape(id), label);
}

std::string cursor(const Frame& f) {
  return fmt::format(
      "<line class=\"cursor\" x1=\"0\" y1=\"{}\" x2=\"0\" y2=\"{}\" visibility=\"hidden\"/>",
      num(f.top), num(f.bottom));
}

// A hover column: its name, colour, unit and the decimals its values keep.
struct HoverColumn {
  const char* name;
  const char* color;
  const char* unit;
  int decimals;
};

// A chart of one series under its limit (memory under the device's total, power
// under the board's limit): what tells the two apart.
struct LimitChart {
  const char* cls;              // the chart's class
  const char* label;            // its accessible name
  const char* css;              // the class of its line and area
  const char* axis_unit;        // after the value axis' numbers
  double vmax;                  // the top of the value axis
  std::optional<double> limit;  // in the series' unit; no line when unknown
  std::string limit_title;      // the limit line's tooltip; none when empty
  HoverColumn column;
};

std::string limit_chart(const Series& s, const std::string& id, nlohmann::json& hover,
                        const std::vector<std::optional<double>>& values, const LimitChart& c) {
  const Frame f{490, 170, 52, 478, 10, 140};
  std::string out = open_svg(f, id, c.cls, c.label);
  out += value_axis(f, c.vmax, 4, c.axis_unit);
  out += time_axis(f, s.span, f.bottom + 18);
  if (c.limit) {
    const double y = f.y(*c.limit, c.vmax);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"limit\"", num(f.left),
                       num(y), num(f.right), num(y));
    out += c.limit_title.empty() ? std::string("/>")
                                 : fmt::format("><title>{}</title></line>", c.limit_title);
  }
  out += fmt::format("<path d=\"{}\" class=\"area-{}\"/>", area(s.t, values, f, s.span, c.vmax),
                     c.css);
  out += fmt::format("<path d=\"{}\" class=\"line {}\"/>", path(s.t, values, f, s.span, c.vmax),
                     c.css);
  out += cursor(f);
  out += "</svg>";
  nlohmann::json h = hover_frame(s, f);
  h["cols"] = {column(c.column.name, c.column.color, c.column.unit, values, c.column.decimals)};
  hover[id] = std::move(h);
  return out;
}

}  // namespace

std::string activity_chart(const Series& s, const verdict::Verdict& v, const std::string& id,
                           nlohmann::json& hover) {
  const bool phases = !v.phases.empty();
  const double top = phases ? 26 : 10;
  const Frame f{1000, top + 170 + 50, 46, 988, top, top + 170};
  const double band_y = f.bottom + 8, band_h = 14;
  std::string out = open_svg(f, id, "activity", "Activity over time");
  out += value_axis(f, 100, 4, "%");
  out += time_axis(f, s.span, band_y + band_h + 16);
  if (phases) {
    for (std::size_t i = 0; i < v.phases.size(); ++i) {
      const auto& p = v.phases[i];
      const double x0 = f.x(std::max(0.0, p.start - s.t0), s.span);
      const double x1 = f.x(std::min(s.span, p.end - s.t0), s.span);
      if (x1 <= x0) continue;
      out += fmt::format(
          "<rect x=\"{}\" y=\"4\" width=\"{}\" height=\"16\" rx=\"3\" class=\"phase{}\"><title>{}"
          "</title></rect>",
          num(x0), num(x1 - x0), i % 2, escape(p.name));
      // A name that does not fit (about 6 units per character) is left to the tooltip.
      if (static_cast<double>(p.name.size()) * 6.2 + 8 < x1 - x0) {
        out += fmt::format(
            "<text x=\"{}\" y=\"16\" class=\"phasename\" text-anchor=\"middle\">{}"
            "</text>",
            num((x0 + x1) / 2), escape(p.name));
      }
      out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"phaseline\"/>",
                         num(x0), num(f.top), num(x0), num(f.bottom));
    }
  }
  out += fmt::format("<path d=\"{}\" class=\"area-sm\"/>", area(s.t, s.sm, f, s.span, 100));
  out += fmt::format("<path d=\"{}\" class=\"line dram\"/>", path(s.t, s.dram, f, s.span, 100));
  out += fmt::format("<path d=\"{}\" class=\"line tensor\"/>", path(s.t, s.tensor, f, s.span, 100));
  out += fmt::format("<path d=\"{}\" class=\"line sm\"/>", path(s.t, s.sm, f, s.span, 100));
  out += fmt::format("<path d=\"{}\" class=\"line util\"/>", path(s.t, s.util, f, s.span, 100));
  // The state band: runs narrower than a pixel merge into the run before them.
  struct Rect {
    double x0, x1;
    diagnosis::GpuState state;
    std::string title;
  };
  std::vector<Rect> rects;
  for (const auto& run : v.diagnosis.timeline) {
    if (run.gpu != s.gpu) continue;
    const double x0 = f.x(std::clamp(run.start - s.t0, 0.0, s.span), s.span);
    const double x1 = f.x(std::clamp(run.end - s.t0, 0.0, s.span), s.span);
    if (!rects.empty() && x1 - x0 < 1.0) {
      rects.back().x1 = std::max(rects.back().x1, x1);
      continue;
    }
    rects.push_back(
        {x0, x1, run.state,
         fmt::format("{} {}–{}: {}", verdict::state_words(run.state), clock_label(run.start - s.t0),
                     clock_label(run.end - s.t0), run.summary)});
  }
  for (const auto& r : rects) {
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
        num(r.x0), num(band_y), num(std::max(r.x1 - r.x0, 1.0)), num(band_h), state_color(r.state),
        escape(r.title));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"end\">state</text>",
                     num(f.left - 6), num(band_y + 11));
  out += cursor(f);
  out += "</svg>";

  nlohmann::json h = hover_frame(s, f);
  h["cols"] = {
      column("GPU util", "#8b95a1", "%", s.util, 1), column("SM active", "#2563eb", "%", s.sm, 1),
      column("tensor", "#9333ea", "%", s.tensor, 1), column("DRAM", "#f59e0b", "%", s.dram, 1)};
  // Runs and bucket times both ascend: one pass finds each bucket's state.
  std::vector<const diagnosis::TimelineRun*> runs;
  for (const auto& run : v.diagnosis.timeline) {
    if (run.gpu == s.gpu) runs.push_back(&run);
  }
  nlohmann::json states = nlohmann::json::array();
  std::size_t r = 0;
  for (double t : s.t) {
    while (r < runs.size() && runs[r]->end - s.t0 < t - 1e-9) ++r;
    const bool inside = r < runs.size() && runs[r]->start - s.t0 <= t + 1e-9;
    states.push_back(inside ? verdict::state_words(runs[r]->state) : std::string());
  }
  h["state"] = std::move(states);
  hover[id] = std::move(h);
  return out;
}

std::string memory_chart(const Series& s, const std::string& id, nlohmann::json& hover) {
  double vmax = s.mem_total_mib.value_or(0);
  for (const auto& m : s.mem_mib) vmax = std::max(vmax, m.value_or(0));
  std::vector<std::optional<double>> gib;
  for (const auto& m : s.mem_mib)
    gib.push_back(m ? std::optional<double>(*m / 1024.0) : std::nullopt);
  return limit_chart(
      s, id, hover, gib,
      {.cls = "memory",
       .label = "Device memory over time",
       .css = "mem",
       .axis_unit = "G",
       .vmax = nice_max(std::max(1.0, vmax / 1024.0)),
       .limit = s.mem_total_mib ? std::optional<double>(*s.mem_total_mib / 1024.0) : std::nullopt,
       .limit_title = {},
       .column = {"memory used", "#0e9f9a", " GiB", 2}});
}

std::string power_chart(const Series& s, const std::string& id, nlohmann::json& hover) {
  double vmax = s.power_limit_w.value_or(0);
  for (const auto& p : s.power_w) vmax = std::max(vmax, p.value_or(0));
  return limit_chart(
      s, id, hover, s.power_w,
      {.cls = "power",
       .label = "Board power over time",
       .css = "power",
       .axis_unit = "W",
       .vmax = nice_max(std::max(100.0, vmax * 1.02)),
       .limit = s.power_limit_w,
       .limit_title =
           s.power_limit_w ? fmt::format("power limit {} W", num(*s.power_limit_w)) : std::string(),
       .column = {"power", "#dc2626", " W", 0}});
}

}  // namespace gpulens::render::html

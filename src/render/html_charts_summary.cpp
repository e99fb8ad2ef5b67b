// SPDX-License-Identifier: Apache-2.0
// The summary charts of the HTML report: the funnel, the state mix, where the
// money went, and MFU. Plain SVG with <title> tooltips; no script needed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_units.hpp"
#include "render/format.hpp"
#include "render/html_svg.hpp"
#include "verdict/state_words.hpp"

namespace gpulens::render::html {
namespace {

constexpr const char* kFunnelColors[] = {"#cbd5e1", "#94a3b8", "#60a5fa", "#2563eb", "#7c3aed"};

std::string text(double x, double y, std::string_view content, std::string_view cls,
                 std::string_view anchor = "start") {
  return fmt::format("<text x=\"{}\" y=\"{}\" class=\"{}\" text-anchor=\"{}\">{}</text>", num(x),
                     num(y), cls, anchor, escape(content));
}

// One part of a stacked bar: its share of the width, colour and tooltip (HTML).
struct BarPart {
  double share;
  std::string_view color;
  std::string title;
};

// A bar across the full width cut into parts, left to right; a part of no width
// is left out. The state mix and the cost share it.
std::string stacked_bar(std::string_view cls, std::string_view label, double height,
                        const std::vector<BarPart>& parts) {
  constexpr double kW = 1000;
  std::string out = fmt::format(
      "<svg class=\"chart {}\" viewBox=\"0 0 {} {}\" preserveAspectRatio=\"none\" "
      "role=\"img\" aria-label=\"{}\">",
      cls, num(kW), num(height), label);
  double x = 0;
  for (const auto& p : parts) {
    const double w = p.share * kW;
    if (w <= 0) continue;
    out += fmt::format(
        "<rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
        num(x), num(w + 0.5), num(height), p.color, p.title);
    x += w;
  }
  out += "</svg>";
  return out;
}

}  // namespace

std::string funnel_chart(const verdict::Verdict& v) {
  struct Row {
    std::string label;
    std::string meaning;
    std::optional<double> share;
    std::optional<double> hours;
    std::optional<double> of_previous;
  };
  std::vector<Row> rows;
  rows.push_back({"paid", "GPU time paid for: the job's duration × its GPUs", 1.0,
                  v.funnel.paid_gpu_hours, std::nullopt});
  for (const auto& s : v.funnel.steps) {
    rows.push_back({s.label, s.meaning, s.share, s.gpu_hours, s.of_previous});
  }
  constexpr double kW = 1000, kRowH = 56, kBarH = 34, kLeft = 150, kBarW = 560;
  constexpr double kCentre = kLeft + kBarW / 2;
  const double h = kRowH * static_cast<double>(rows.size());
  std::string out = fmt::format(
      "<svg class=\"chart funnel\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"Utilization "
      "funnel\">",
      num(kW), num(h));
  // The previous bar's width; negative until one was drawn. (A plain double rather
  // than std::optional: GCC 12 at -O3 warns falsely that the optional may be unset.)
  double prev_w = -1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const double y = static_cast<double>(i) * kRowH + (kRowH - kBarH) / 2;
    const double w = r.share ? std::max(2.0, std::clamp(*r.share, 0.0, 1.0) * kBarW) : 0;
    // A trapezoid from the previous bar narrows to this one: the loss between steps.
    if (prev_w >= 0 && r.share) {
      const double y0 = y - (kRowH - kBarH);
      out += fmt::format(
          "<path d=\"M{} {} L{} {} L{} {} L{} {} Z\" fill=\"#e2e8f0\" opacity=\"0.7\"/>",
          num(kCentre - prev_w / 2), num(y0), num(kCentre + prev_w / 2), num(y0),
          num(kCentre + w / 2), num(y), num(kCentre - w / 2), num(y));
    }
    out += text(kLeft - 14, y + kBarH / 2 + 5, r.label, "flabel", "end");
    if (r.share) {
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"5\" fill=\"{}\"><title>{}: {} "
          "of paid time</title></rect>",
          num(kCentre - w / 2), num(y), num(w), num(kBarH), kFunnelColors[i % 5], escape(r.meaning),
          share_text(r.share, 1));
      out += text(kLeft + kBarW + 24, y + 15, share_text(r.share, 1), "fvalue");
      std::string sub = format_gpu_hours(r.hours.value_or(0)) + " GPU-h";
      if (r.of_previous) sub += " · " + share_text(r.of_previous, 0) + " of the step above";
      out += text(kLeft + kBarW + 24, y + 31, sub, "fsub");
      prev_w = w;
    } else {
      out += text(kCentre, y + kBarH / 2 + 5, "not measured on this GPU", "fsub", "middle");
      prev_w = -1;
    }
  }
  out += "</svg>";
  return out;
}

std::string state_bar(const verdict::Verdict& v) {
  std::vector<BarPart> parts;
  const auto part = [&](double share, std::string_view color, const std::string& name) {
    parts.push_back({share, color, fmt::format("{}: {}", escape(name), share_text(share, 1))});
  };
  // Start-up first and tear-down last, where they happened.
  part(v.startup_share, kEdgesColor, "start-up");
  for (const auto& s : v.states) part(s.share, state_color(s.state), verdict::state_words(s.state));
  part(v.teardown_share, kEdgesColor, "tear-down");
  return stacked_bar("statebar", "Share of time per state", 30, parts);
}

std::string cost_bar(const verdict::Verdict& v) {
  const verdict::Cost& c = v.cost;
  if (!c.total || *c.total <= 0) return {};
  struct Part {
    const char* label;
    std::optional<double> amount;
    const char* color;
  };
  const Part parts[] = {{"SMs at work", c.useful, "#22a06b"},
                        {"inefficiency: working, SMs idle", c.inefficiency, "#e09b2d"},
                        {"working, how well not measured", c.working_unmeasured, "#2a9d9d"},
                        {"idle in the steady state", c.idle, "#e5533c"},
                        {"start-up and tear-down", c.edges, kEdgesColor}};
  std::vector<BarPart> bar;
  for (const auto& p : parts) {
    if (!p.amount || *p.amount <= 0) continue;
    bar.push_back({*p.amount / *c.total, p.color,
                   fmt::format("{}: {}", p.label, format_money(*p.amount, c.currency))});
  }
  return stacked_bar("costbar", "Where the money went", 34, bar);
}

std::string mfu_bars(const verdict::Verdict& v) {
  const verdict::MfuSummary& m = v.mfu;
  struct Bar {
    std::string label;
    std::optional<double> value;
    const char* color;
  };
  std::vector<Bar> bars;
  if (m.model) bars.push_back({"model FLOPs MFU", m.model, "#7c3aed"});
  if (m.model_over_job) bars.push_back({"… over the whole job", m.model_over_job, "#a78bfa"});
  if (m.estimate) bars.push_back({"hardware estimate", m.estimate, "#94a3b8"});
  if (bars.empty()) return {};
  constexpr double kW = 1000, kRowH = 34, kLeft = 190, kBarW = 700;
  const double h = kRowH * static_cast<double>(bars.size()) + 18;
  std::string out =
      fmt::format("<svg class=\"chart mfu\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"MFU\">",
                  num(kW), num(h));
  for (int pct = 0; pct <= 100; pct += 25) {
    const double x = kLeft + kBarW * pct / 100.0;
    out += fmt::format("<line x1=\"{}\" y1=\"0\" x2=\"{}\" y2=\"{}\" class=\"grid\"/>", num(x),
                       num(x), num(h - 16));
    out += text(x, h - 3, fmt::format("{}%", pct), "axis", "middle");
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = static_cast<double>(i) * kRowH + 6;
    const double w = std::clamp(*bars[i].value, 0.0, 1.0) * kBarW;
    out += text(kLeft - 12, y + 16, bars[i].label, "flabel small", "end");
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"22\" rx=\"4\" fill=\"{}\"/>",
                       num(kLeft), num(y), num(std::max(w, 1.5)), bars[i].color);
    out += text(kLeft + w + 8, y + 16, share_text(bars[i].value, 1), "fvalue small");
  }
  out += "</svg>";
  return out;
}

}  // namespace gpulens::render::html

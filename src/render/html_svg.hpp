// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small pieces the HTML report is built from: escaping, state colours and the
// inline SVG charts, drawn here so that the page needs no script library and
// no network. Each chart returns one <svg> element as a string.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/trace_reader.hpp"
#include "diagnosis/timeline.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::render::html {

// Text for an element or an attribute value: & < > " ' as entities, and controls,
// bidi overrides and broken UTF-8 replaced as for a terminal (core/text_safety: they
// are parse errors in HTML, and a page printed to a terminal must not drive it).
std::string escape(std::string_view text);
// `page` with `section` put before its closing script (a report's added card, such
// as the kernel view's), or at its end when it has none.
std::string insert_before_script(std::string page, const std::string& section);
// A number for an SVG attribute: at most one decimal, no trailing zeros.
std::string num(double x);

std::string_view state_color(diagnosis::GpuState s);
// Start-up and tear-down: grey, apart from the states' colours.
inline constexpr const char* kEdgesColor = "#b8c0cc";

// Relative time for axis labels: "0s", "45s", "2:30", "1:05:00".
std::string clock_label(double seconds);

// One GPU's metrics averaged into at most `max_points` time buckets.
struct Series {
  int gpu = 0;
  double t0 = 0;  // the verdict's start: x = 0
  double span = 0;
  std::vector<double> t;  // bucket centres, seconds from t0
  std::vector<std::optional<double>> util, sm, tensor, dram, mem_mib, power_w;
  std::optional<double> mem_total_mib;
  std::optional<double> power_limit_w;
};

Series downsample(const Trace& trace, int gpu, double t0, double t1, std::size_t max_points);

// Charts. `id` names the chart for the hover script, whose data goes to `hover`.
std::string funnel_chart(const verdict::Verdict& v);
std::string state_bar(const verdict::Verdict& v);
std::string cost_bar(const verdict::Verdict& v);
std::string mfu_bars(const verdict::Verdict& v);
std::string activity_chart(const Series& s, const verdict::Verdict& v, const std::string& id,
                           nlohmann::json& hover);
std::string memory_chart(const Series& s, const std::string& id, nlohmann::json& hover);
std::string power_chart(const Series& s, const std::string& id, nlohmann::json& hover);

}  // namespace gpulens::render::html

// SPDX-License-Identifier: Apache-2.0
// The HTML report's per-GPU time series: lines break where a value is missing,
// the value axis is round and holds the limit, the state band and the phases sit
// where they happened, and the hover data has a value per bucket in the terms
// the page's script reads (px, t, w, cols of n, c, u, v; html_assets.cpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "render/html_svg.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::render::html {
namespace {

std::size_t times_in(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The `d` of the first <path> with this class.
std::string path_of(const std::string& svg, const std::string& cls) {
  const auto end = svg.find("\" class=\"" + cls + "\"");
  if (end == std::string::npos) return {};
  const auto start = svg.rfind("d=\"", end);
  return svg.substr(start + 3, end - start - 3);
}

// Four buckets 10 s apart over 40 s; the second has no memory or power figure.
Series four_buckets() {
  Series s;
  s.gpu = 1;
  s.t0 = 1000;
  s.span = 40;
  s.t = {0, 10, 20, 30};
  s.mem_mib = {1024, std::nullopt, 2048, 4096};
  s.mem_total_mib = 8192;
  s.power_w = {300, std::nullopt, 350, 700};
  s.util = {50, 60, std::nullopt, 100};
  s.sm = {40, 50, 60, 70};
  s.tensor = s.dram = {std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  return s;
}

TEST(HtmlChartsTime, MemoryUnderItsTotalWithTheLineBrokenWhereNotMeasured) {
  nlohmann::json hover = nlohmann::json::object();
  const std::string svg = memory_chart(four_buckets(), "g1m", hover);
  EXPECT_EQ(svg.rfind("<svg class=\"chart memory\" viewBox=\"0 0 490 170\" data-hover=\"g1m\"", 0),
            0u)
      << svg;
  // 8 GiB total: the axis tops at 8G, the limit line on it.
  EXPECT_NE(svg.find(">8G</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<line x1=\"52\" y1=\"10\" x2=\"478\" y2=\"10\" class=\"limit\"/>"),
            std::string::npos)
      << svg;
  EXPECT_EQ(times_in(path_of(svg, "line mem"), "M"), 2u) << path_of(svg, "line mem");
  EXPECT_EQ(times_in(path_of(svg, "area-mem"), "Z"), 2u) << path_of(svg, "area-mem");
  // Time labels every 5 s from 0 to 40 s.
  EXPECT_EQ(times_in(svg, "class=\"axis\" text-anchor=\"middle\""), 9u);
  EXPECT_NE(svg.find(">40s</text>"), std::string::npos);
  const auto& h = hover.at("g1m");
  EXPECT_EQ(h.at("w"), 490);
  EXPECT_EQ(h.at("t"), nlohmann::json({0, 10, 20, 30}));
  EXPECT_EQ(h.at("px"), nlohmann::json({52, 158.5, 265, 371.5}));
  ASSERT_EQ(h.at("cols").size(), 1u);
  const auto& col = h.at("cols")[0];
  EXPECT_EQ(col.at("n"), "memory used");
  EXPECT_EQ(col.at("u"), " GiB");
  EXPECT_EQ(col.at("v"), nlohmann::json({1, nullptr, 2, 4}));
}

TEST(HtmlChartsTime, PowerAboveItsLimitStillFitsTheAxis) {
  nlohmann::json hover = nlohmann::json::object();
  Series s = four_buckets();
  const std::string no_limit = power_chart(s, "g1p", hover);
  EXPECT_EQ(no_limit.find("class=\"limit\""), std::string::npos);
  // 700 W and 2 % of headroom: a round 800 W at the top.
  EXPECT_NE(no_limit.find(">800W</text>"), std::string::npos) << no_limit;
  s.power_limit_w = 650;
  const std::string limited = power_chart(s, "g1p", hover);
  EXPECT_NE(limited.find("<title>power limit 650 W</title>"), std::string::npos) << limited;
  EXPECT_EQ(hover.at("g1p").at("cols")[0].at("v"), nlohmann::json({300, nullptr, 350, 700}));
}

TEST(HtmlChartsTime, ActivityHasTheStateBandPhasesAndAStatePerBucket) {
  const Series s = four_buckets();
  verdict::Verdict v;
  diagnosis::TimelineRun busy;
  busy.gpu = 1;
  busy.start = 1000;
  busy.end = 1025;
  busy.state = diagnosis::GpuState::ComputeBound;
  busy.summary = "SMs <busy>";
  diagnosis::TimelineRun other = busy;
  other.gpu = 0;  // another GPU's: not in this chart
  other.summary = "other gpu";
  v.diagnosis.timeline = {busy, other};
  nlohmann::json hover = nlohmann::json::object();
  const std::string plain = activity_chart(s, v, "g1a", hover);
  EXPECT_EQ(plain.rfind("<svg class=\"chart activity\" viewBox=\"0 0 1000 230\"", 0), 0u) << plain;
  EXPECT_NE(plain.find("SMs &lt;busy&gt;</title>"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("other gpu"), std::string::npos);
  EXPECT_EQ(plain.find("class=\"phase0\""), std::string::npos);
  EXPECT_EQ(times_in(path_of(plain, "line util"), "M"), 2u) << path_of(plain, "line util");
  EXPECT_EQ(path_of(plain, "line tensor"), "");  // nothing measured: nothing drawn
  const auto& h = hover.at("g1a");
  ASSERT_EQ(h.at("cols").size(), 4u);
  EXPECT_EQ(h.at("cols")[0].at("n"), "GPU util");
  EXPECT_EQ(h.at("cols")[1].at("v"), nlohmann::json({40, 50, 60, 70}));
  // The run covers the first three buckets; the last is past its end.
  const auto& states = h.at("state");
  ASSERT_EQ(states.size(), 4u);
  EXPECT_NE(states[0], "");
  EXPECT_EQ(states[2], states[0]);
  EXPECT_EQ(states[3], "");

  v.phases.push_back({"warm-up & <go>", 1000, 1020, {}, std::nullopt, std::nullopt, std::nullopt});
  v.phases.push_back({"x", 1030, 1090, {}, std::nullopt, std::nullopt, std::nullopt});
  const std::string phased = activity_chart(s, v, "g1a", hover);
  EXPECT_EQ(phased.rfind("<svg class=\"chart activity\" viewBox=\"0 0 1000 246\"", 0), 0u);
  EXPECT_NE(phased.find("class=\"phase0\"><title>warm-up &amp; &lt;go&gt;</title>"),
            std::string::npos)
      << phased;
  EXPECT_NE(phased.find("class=\"phase1\""), std::string::npos);  // cut at the chart's end
  EXPECT_EQ(times_in(phased, "class=\"phaseline\""), 2u);
}

}  // namespace
}  // namespace gpulens::render::html

// SPDX-License-Identifier: Apache-2.0
// The HTML report's summary charts: the funnel narrows bar by bar and says what it
// did not measure, the state bar puts start-up first and tear-down last, the cost
// bar leaves out what cost nothing, and the MFU bars only what was measured.
#include <gtest/gtest.h>

#include <string>

#include "core/text_units.hpp"
#include "render/html_svg.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::render::html {
namespace {

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

verdict::FunnelStep funnel_step(const std::string& label, std::optional<double> share) {
  verdict::FunnelStep s;
  s.label = label;
  s.meaning = label + " <means>";
  s.share = share;
  if (share) s.gpu_hours = *share * 2;
  return s;
}

TEST(HtmlChartsSummary, TheFunnelNarrowsAndSaysWhatWasNotMeasured) {
  verdict::Verdict v;
  v.funnel.paid_gpu_hours = 2;
  v.funnel.steps = {funnel_step("allocated", 0.9), funnel_step("kernel-active", 0.5),
                    funnel_step("SM-active", std::nullopt)};
  v.funnel.steps[1].of_previous = 0.5 / 0.9;
  const std::string svg = funnel_chart(v);
  EXPECT_EQ(svg.rfind("<svg class=\"chart funnel\" viewBox=\"0 0 1000 224\"", 0), 0u) << svg;
  EXPECT_EQ(svg.substr(svg.size() - 6), "</svg>");
  // Paid, allocated and kernel-active are bars; the unmeasured step is said, not drawn.
  EXPECT_EQ(count_of(svg, "<rect "), 3u);
  EXPECT_EQ(count_of(svg, "not measured on this GPU"), 1u);
  // A trapezoid between each pair of bars drawn one after the other.
  EXPECT_EQ(count_of(svg, "fill=\"#e2e8f0\""), 2u);
  // The bar of half the paid time is half as wide as the paid one (560).
  EXPECT_NE(svg.find("width=\"280\" height=\"34\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>kernel-active &lt;means&gt;: " + share_text(0.5, 1)),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find(share_text(0.5 / 0.9, 0) + " of the step above"), std::string::npos);
}

TEST(HtmlChartsSummary, TheStateBarPutsStartUpFirstAndTearDownLast) {
  verdict::Verdict v;
  v.startup_share = 0.1;
  v.teardown_share = 0.05;
  v.states = {{diagnosis::GpuState::ComputeBound, 0.6, 0}, {diagnosis::GpuState::Idle, 0.25, 0}};
  const std::string svg = state_bar(v);
  EXPECT_EQ(count_of(svg, "<rect "), 4u);
  const auto startup = svg.find("<title>start-up: ");
  const auto compute = svg.find(std::string(state_color(diagnosis::GpuState::ComputeBound)));
  const auto teardown = svg.find("<title>tear-down: ");
  ASSERT_NE(startup, std::string::npos) << svg;
  ASSERT_NE(compute, std::string::npos) << svg;
  ASSERT_NE(teardown, std::string::npos) << svg;
  EXPECT_LT(startup, compute);
  EXPECT_LT(compute, teardown);
  // The parts follow each other: the compute-bound one starts where start-up ends.
  EXPECT_NE(svg.find("<rect x=\"100\" y=\"0\" width=\"600.5\""), std::string::npos) << svg;
  // No start-up: no empty rectangle for it.
  v.startup_share = 0;
  EXPECT_EQ(count_of(state_bar(v), "<rect "), 3u);
}

TEST(HtmlChartsSummary, TheCostBarLeavesOutWhatCostNothing) {
  verdict::Verdict v;
  EXPECT_EQ(cost_bar(v), "");  // no price: no money figures
  v.cost.total = 10;
  v.cost.useful = 6;
  v.cost.inefficiency = 4;
  v.cost.idle = 0;
  const std::string svg = cost_bar(v);
  EXPECT_EQ(svg.rfind("<svg class=\"chart costbar\"", 0), 0u) << svg;
  EXPECT_EQ(count_of(svg, "<rect "), 2u);
  EXPECT_NE(svg.find("<title>SMs at work: $6.00</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>inefficiency: working, SMs idle: $4.00</title>"), std::string::npos)
      << svg;
  EXPECT_EQ(svg.find("idle in the steady state"), std::string::npos);
}

TEST(HtmlChartsSummary, MfuBarsOnlyForWhatWasMeasured) {
  verdict::Verdict v;
  EXPECT_EQ(mfu_bars(v), "");
  v.mfu.model = 0.25;
  v.mfu.estimate = 1.5;  // past the peak: drawn to its end, said as it is
  const std::string svg = mfu_bars(v);
  EXPECT_NE(svg.find(">model FLOPs MFU<"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">hardware estimate<"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("over the whole job"), std::string::npos);
  EXPECT_NE(svg.find("width=\"175\" height=\"22\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("width=\"700\" height=\"22\""), std::string::npos) << svg;
  EXPECT_NE(svg.find(share_text(1.5, 1)), std::string::npos) << svg;
  EXPECT_EQ(count_of(svg, "class=\"grid\""), 5u);  // 0, 25, 50, 75 and 100 %
}

}  // namespace
}  // namespace gpulens::render::html

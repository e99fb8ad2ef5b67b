// SPDX-License-Identifier: Apache-2.0
// The HTML report's SVG pieces below the charts: text escaped for an element or
// an attribute (and made safe first), numbers with at most one decimal, clock
// labels for the time axis, and one GPU's samples averaged into time buckets.
#include "render/html_svg.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/trace_reader.hpp"

namespace gpulens::render::html {
namespace {

Sample svg_sample(int gpu, double t, double util, std::optional<double> sm) {
  Sample s;
  s.gpu = gpu;
  s.t = t;
  s.values.set(Metric::GpuUtil, util);
  if (sm) s.values.set(Metric::SmActive, *sm);
  return s;
}

TEST(HtmlSvg, TextIsEscapedForElementsAndAttributes) {
  EXPECT_EQ(escape(R"(<b class="x">Tom & Jerry's</b>)"),
            "&lt;b class=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/b&gt;");
  EXPECT_EQ(escape("plain"), "plain");
  const std::string controls = escape("a\x1b[2Jb\xff");
  EXPECT_EQ(controls.find('\x1b'), std::string::npos) << controls;
  EXPECT_EQ(controls.find('\xff'), std::string::npos) << controls;
  EXPECT_EQ(escape("two\nlines"), "two\nlines") << "free text keeps its lines";
}

TEST(HtmlSvg, NumbersHaveAtMostOneDecimal) {
  EXPECT_EQ(num(12), "12");
  EXPECT_EQ(num(12.04), "12");
  EXPECT_EQ(num(12.06), "12.1");
  EXPECT_EQ(num(-0.25), "-0.3");  // std::round: half away from zero
  EXPECT_EQ(num(NAN), "0");
  EXPECT_EQ(num(INFINITY), "0");
}

TEST(HtmlSvg, ClockLabelsGrowWithTheSpan) {
  EXPECT_EQ(clock_label(0), "0s");
  EXPECT_EQ(clock_label(-5), "0s");
  EXPECT_EQ(clock_label(44.6), "45s");
  EXPECT_EQ(clock_label(150), "2:30");
  EXPECT_EQ(clock_label(3599), "59:59");
  EXPECT_EQ(clock_label(3900), "1:05:00");
}

TEST(HtmlSvg, SamplesAreAveragedIntoBucketsOfTheirGpu) {
  Trace trace;
  DeviceInfo d;
  d.index = 1;
  d.mem_total_mib = 81559;
  d.power_limit_w = 700;
  trace.header.devices.push_back(d);
  for (int i = 0; i < 10; ++i) {
    // t = 100..109: two buckets of five seconds; SM activity only in the first.
    trace.samples.push_back(
        svg_sample(1, 100 + i, i < 5 ? 10 : 50, i < 5 ? std::optional<double>(20) : std::nullopt));
    trace.samples.push_back(svg_sample(0, 100 + i, 99, 99));  // another GPU: not counted
  }
  trace.samples.push_back(svg_sample(1, 200, 100, 100));  // past t1: not counted
  const Series s = downsample(trace, 1, 100, 110, 2);
  EXPECT_EQ(s.gpu, 1);
  EXPECT_EQ(s.span, 10);
  EXPECT_EQ(s.mem_total_mib, 81559);
  EXPECT_EQ(s.power_limit_w, 700);
  ASSERT_EQ(s.t.size(), 2u);
  EXPECT_DOUBLE_EQ(s.t[0], 2);  // the mean of 0..4 s from t0
  EXPECT_DOUBLE_EQ(s.t[1], 7);
  ASSERT_EQ(s.util.size(), 2u);
  EXPECT_DOUBLE_EQ(*s.util[0], 10);
  EXPECT_DOUBLE_EQ(*s.util[1], 50);
  EXPECT_DOUBLE_EQ(*s.sm[0], 20);
  EXPECT_FALSE(s.sm[1].has_value()) << "a bucket without the reading has none, not 0";
  EXPECT_FALSE(s.power_w[0].has_value());
  // One sample a second in buckets of 0.2 s: empty buckets are left out.
  EXPECT_EQ(downsample(trace, 1, 100, 110, 50).t.size(), 10u);
  EXPECT_TRUE(downsample(trace, 7, 100, 110, 2).t.empty());
}

}  // namespace
}  // namespace gpulens::render::html

// SPDX-License-Identifier: Apache-2.0
// The pieces every line of `gpulens top` is built from: percentages that keep
// four characters, "-" for a reading not taken and "n/a" for one the GPU cannot
// give (never 0), rates in one unit for both directions, short GPU names, and
// the state's label and colour.
#include "tui/cell_text.hpp"

#include <gtest/gtest.h>

#include "tui/layout.hpp"
#include "tui/top_model.hpp"

namespace gpulens::tui {
namespace {

TEST(TuiCellText, AbsentIsADashAndUnsupportedIsNaNeverZero) {
  EXPECT_EQ(pct_text(std::nullopt), "-");
  EXPECT_EQ(pct_text(std::nullopt, true), "n/a");
  EXPECT_EQ(pct_text(98.4), "98%");
  EXPECT_EQ(pct_text(0.7), "0.7%");  // a near-idle GPU does not read 0 or 1
  EXPECT_EQ(pct_text(0.0), "0%");
  EXPECT_EQ(num(std::nullopt), "-");
  EXPECT_EQ(num(1979.6), "1980");
  EXPECT_EQ(num(56.26, "{:.1f}"), "56.3");
  EXPECT_EQ(gib(std::nullopt), "-");
  EXPECT_EQ(gib(81559), "79.6");
  EXPECT_EQ(mib_short(std::nullopt), "-");
  EXPECT_EQ(mib_short(512), "512M");
  EXPECT_EQ(mib_short(12800), "12.5G");
}

TEST(TuiCellText, BothDirectionsOfARateShareOneUnit) {
  EXPECT_EQ(rates(14, 5, true), "\u219314 \u21915 MiB/s");
  EXPECT_EQ(rates(14, 5, false), "rx 14 tx 5 MiB/s");
  // Either direction past 10 GiB/s switches both.
  EXPECT_EQ(rates(12800, 3, false), "rx 12.5 tx 0.0 GiB/s");
  EXPECT_EQ(rates(std::nullopt, 20480, false), "rx - tx 20.0 GiB/s");
  EXPECT_EQ(rates(std::nullopt, std::nullopt, false), "rx - tx - MiB/s");
}

TEST(TuiCellText, ShortNamesDropTheVendorAndTheRest) {
  EXPECT_EQ(short_name("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(short_name("Tesla V100-SXM2-16GB"), "V100-SXM2-16GB");
  EXPECT_EQ(short_name("NVIDIA A100-SXM4-80GB"), "A100-SXM4-80GB");
  EXPECT_EQ(short_name("H200"), "H200");
  EXPECT_EQ(short_name(""), "");
}

TEST(TuiCellText, TheStatesLabelAndColour) {
  GpuView g;
  EXPECT_EQ(state_label(g), "");
  EXPECT_EQ(state_style(g), Style::Dim) << "no state: dim";
  g.state = "compute_bound";
  EXPECT_EQ(state_label(g), "compute_bound");
  EXPECT_EQ(state_style(g), state_style_of(diagnosis::GpuState::ComputeBound));
  g.throttled = true;
  g.alerts = {"power capped"};
  EXPECT_EQ(state_label(g), "compute_bound+thr !");
  g.critical = true;
  EXPECT_EQ(state_style(g), Style::Bad) << "a critical alert outranks the state";
  g.critical = false;
  g.state = "no_such_state";
  EXPECT_EQ(state_style(g), Style::Dim);
}

}  // namespace
}  // namespace gpulens::tui

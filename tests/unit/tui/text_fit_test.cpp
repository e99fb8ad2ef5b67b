// SPDX-License-Identifier: Apache-2.0
// Widths, cuts, wrapping, bars and sparklines of `gpulens top` (tui/text_fit).
#include "tui/text_fit.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace gpulens::tui {
namespace {

TEST(TuiText, FitCutsWithEllipsisAndPads) {
  EXPECT_EQ(fit("abc", 5), "abc  ");
  EXPECT_EQ(fit("abcdef", 4), "abc\u2026");
  EXPECT_EQ(fit("abcdef", 4, false), "abc~");
  EXPECT_EQ(text_width("\u2588\u2588a"), 3u);
}

TEST(TuiText, BarShowsAnyActivityAndScales) {
  EXPECT_EQ(bar(0, 4, false), "    ");
  EXPECT_EQ(bar(0.8, 10, false), "#         ");  // 1 SM of 132 is not invisible
  EXPECT_EQ(bar(100, 4, false), "####");
  EXPECT_EQ(bar(50, 4, true), "\u2588\u2588  ");
  EXPECT_EQ(text_width(bar(33, 10, true)), 10u);
  EXPECT_EQ(bar(std::nullopt, 3, false), "   ");
}

TEST(TuiText, SparklineIsRightAlignedAndMarksGaps) {
  std::deque<std::optional<double>> h = {0.0, std::nullopt, 100.0};
  EXPECT_EQ(sparkline(h, 5, false), "  _ #");
  EXPECT_EQ(text_width(sparkline(h, 2, true)), 2u);  // only the newest that fit
}

TEST(TuiText, WrapBreaksAtSpacesAndMarksACut) {
  EXPECT_EQ(wrap("the SMs are busy", 10, 3), (std::vector<std::string>{"the SMs", "are busy"}));
  EXPECT_EQ(wrap("one two three four", 9, 1), (std::vector<std::string>{"one two \u2026"}));
  EXPECT_EQ(wrap("a", 5, 2), (std::vector<std::string>{"a"}));
  EXPECT_EQ(wrap("abcdefghij", 4, 2), (std::vector<std::string>{"abc\u2026"}));
  // A number and its unit stay on one line (issue 48: "17" ended a line of `top`
  // at 80 columns and "%" began the next).
  EXPECT_EQ(wrap("waits 17 % of it", 8, 3), (std::vector<std::string>{"waits", "17 % of", "it"}));
  EXPECT_EQ(wrap("at 1440 MHz, fine", 9, 3), (std::vector<std::string>{"at", "1440 MHz,", "fine"}));
  // Cut short, the last line ends at a whole word: never "busy 9…".
  EXPECT_EQ(wrap("busy 95 % SM", 8, 1), (std::vector<std::string>{"busy \u2026"}));
}

}  // namespace
}  // namespace gpulens::tui

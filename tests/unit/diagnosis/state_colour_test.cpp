// SPDX-License-Identifier: Apache-2.0
// Every state has its own colour, and every view draws the same one: the HTML
// report and `gpulens top` read diagnosis/state_colour; the dashboard repeats
// the hex values in web/src/format.js, held equal here.
#include "diagnosis/state_colour.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "render/html_svg.hpp"

namespace gpulens::diagnosis {
namespace {

TEST(StateColour, EachStateHasItsOwnColourInEveryPalette) {
  std::set<std::string_view> hex;
  std::set<short> xterm;
  std::set<std::pair<Ansi8, bool>> basic;
  for (const GpuState s : all_states()) {
    const StateColour& c = state_colour(s);
    EXPECT_TRUE(hex.insert(c.hex).second) << state_id(s) << " shares " << c.hex;
    EXPECT_TRUE(xterm.insert(c.xterm256).second) << state_id(s) << " shares xterm " << c.xterm256;
    EXPECT_TRUE(basic.insert({c.ansi8, c.bold}).second)
        << state_id(s) << " shares its 8-colour look";
    EXPECT_GE(c.xterm256, 16) << "the 6x6x6 cube and greys do not depend on the terminal's theme";
    EXPECT_LE(c.xterm256, 255);
  }
}

TEST(StateColour, TheHtmlReportUsesTheTable) {
  for (const GpuState s : all_states())
    EXPECT_EQ(render::html::state_color(s), state_colour(s).hex);
}

TEST(StateColour, TheDashboardUsesTheSameColours) {
  std::ifstream in(std::string(GPULENS_SOURCE_DIR) + "/web/src/format.js");
  ASSERT_TRUE(in) << "web/src/format.js";
  std::stringstream text;
  text << in.rdbuf();
  const std::string js = text.str();
  for (const GpuState s : all_states()) {
    const std::regex entry(std::string(state_id(s)) + R"re(: \{[^}]*colour: "(#[0-9a-f]{6})")re");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(js, m, entry)) << state_id(s) << " missing from format.js STATES";
    EXPECT_EQ(m[1].str(), state_colour(s).hex) << state_id(s);
  }
}

}  // namespace
}  // namespace gpulens::diagnosis

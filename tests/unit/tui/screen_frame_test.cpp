// SPDX-License-Identifier: Apache-2.0
// The frame around `gpulens top`'s GPUs: the title says where ticks come from
// (live, a replay and its speed, its end), and the help screen lists the keys.
#include <gtest/gtest.h>

#include "tui/layout.hpp"
#include "tui/view_state.hpp"
#include "tui_support.hpp"

namespace gpulens::tui {
namespace {

using testing::make_model;
using testing::screen_contains;

TEST(TuiLayout, HelpScreenListsKeys) {
  ViewState v;
  v.help = true;
  const Screen s = layout_top(make_model(1), v, FeedStatus{}, 80, 24, {});
  EXPECT_TRUE(screen_contains(s, "Keys"));
  EXPECT_TRUE(screen_contains(s, "reverse the sort order"));
}

TEST(TuiLayout, TitleSaysWhereTicksComeFrom) {
  FeedStatus feed;
  feed.live = false;
  feed.speed = 10;
  EXPECT_TRUE(screen_contains(layout_top(make_model(1), {}, feed, 100, 20, {}), "replay x10"));
  feed.ended = true;
  EXPECT_TRUE(
      screen_contains(layout_top(make_model(1), {}, feed, 100, 20, {}), "end of recording"));
}

TEST(TuiFrame, TheFooterListsTheKeysOrAsksOrEditsTheFilter) {
  ViewState v;
  const Screen plain = layout_top(make_model(1), v, FeedStatus{}, 120, 24, {});
  EXPECT_TRUE(screen_contains(plain, "q quit  ? help  / filter"));
  EXPECT_TRUE(screen_contains(plain, "\u2191\u2193 select"));
  const Screen ascii = layout_top(make_model(1), v, FeedStatus{}, 120, 24, TerminalCaps{false});
  EXPECT_TRUE(screen_contains(ascii, "j/k select"));
  v.message = "no process selected";
  EXPECT_TRUE(screen_contains(layout_top(make_model(1), v, FeedStatus{}, 120, 24, {}),
                              " no process selected "));
  v.editing_filter = true;
  v.filter_draft = "pyt";
  const Screen editing = layout_top(make_model(1), v, FeedStatus{}, 120, 24, {});
  EXPECT_TRUE(screen_contains(editing, " filter: pyt_"));
  EXPECT_TRUE(screen_contains(editing, "Enter keep  Esc clear"));
  EXPECT_FALSE(screen_contains(editing, "q quit")) << "one footer at a time";
}

TEST(TuiFrame, HelpSaysWhenSignalsAreOff) {
  ViewState v;
  v.help = true;
  EXPECT_TRUE(screen_contains(layout_top(make_model(1), v, FeedStatus{}, 100, 30, {}),
                              "send SIGTERM / SIGKILL / SIGINT to the selected process"));
  v.signals_off = "a replay has no processes";
  const Screen off = layout_top(make_model(1), v, FeedStatus{}, 100, 30, {});
  EXPECT_TRUE(screen_contains(off, "off: a replay has no processes"));
  EXPECT_FALSE(screen_contains(off, "send SIGTERM"));
}

}  // namespace
}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
// `gpulens top`'s keys against its view state: sort, filter, selection, the
// signal's confirmation (and why a replay has none), help.
#include "tui/view_state.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "tui/layout.hpp"
#include "tui_support.hpp"

namespace gpulens::tui {
namespace {

using testing::make_model;
using testing::screen_contains;

TEST(TuiKeys, SortCyclesAndReverses) {
  ViewState v;
  const auto procs = make_model(2).procs;
  EXPECT_EQ(visible_processes(procs, v).front().pid, 200u);  // most device memory first
  handle_key(v, '<', {});
  EXPECT_EQ(v.sort, SortKey::Gpu);
  EXPECT_EQ(visible_processes(procs, v).front().gpu, 1);
  handle_key(v, 'r', {});
  EXPECT_EQ(visible_processes(procs, v).front().gpu, 0);
  handle_key(v, '>', {});
  handle_key(v, '>', {});
  EXPECT_EQ(v.sort, SortKey::Sm);
  v.sort = SortKey::Command;
  handle_key(v, '>', {});
  EXPECT_EQ(v.sort, SortKey::Pid);  // wraps around
}

TEST(TuiKeys, FilterIsTypedThenKeptOrCleared) {
  ViewState v;
  const auto procs = make_model(2).procs;
  handle_key(v, '/', procs);
  for (char c : std::string("TRAIN")) handle_key(v, c, procs);
  EXPECT_EQ(visible_processes(procs, v).size(), 1u);  // live while typing
  handle_key(v, key::kEnter, procs);
  EXPECT_FALSE(v.editing_filter);
  EXPECT_EQ(v.filter, "TRAIN");
  EXPECT_EQ(visible_processes(procs, v).front().pid, 100u);
  EXPECT_EQ(handle_key(v, 'q', procs).kind, KeyAction::Quit);  // q quits again
  handle_key(v, key::kEscape, procs);
  EXPECT_EQ(visible_processes(procs, v).size(), 3u);
}

TEST(TuiKeys, FilterBackspaceAndEscape) {
  ViewState v;
  handle_key(v, '/', {});
  handle_key(v, 'a', {});
  handle_key(v, 'b', {});
  handle_key(v, key::kBackspace, {});
  EXPECT_EQ(v.filter_draft, "a");
  EXPECT_EQ(handle_key(v, 'q', {}).kind, KeyAction::Redraw);  // typed, not quit
  handle_key(v, key::kEscape, {});
  EXPECT_FALSE(v.editing_filter);
  EXPECT_TRUE(v.filter.empty());
}

TEST(TuiKeys, SignalNeedsASelectionAndAConfirmation) {
  ViewState v;
  const auto visible = visible_processes(make_model(2).procs, v);
  EXPECT_EQ(handle_key(v, 'T', visible).kind, KeyAction::Redraw);
  EXPECT_FALSE(v.confirm);
  EXPECT_NE(v.message.find("select"), std::string::npos);
  handle_key(v, key::kDown, visible);  // selects the first row
  handle_key(v, key::kDown, visible);
  EXPECT_EQ(v.selected_pid, visible[1].pid);
  handle_key(v, 'K', visible);
  ASSERT_TRUE(v.confirm);
  EXPECT_EQ(v.confirm->signal, SIGKILL);
  EXPECT_EQ(handle_key(v, 'n', visible).kind, KeyAction::Redraw);  // declined
  EXPECT_FALSE(v.confirm);
  handle_key(v, 'T', visible);
  const KeyAction yes = handle_key(v, 'y', visible);
  EXPECT_EQ(yes.kind, KeyAction::Signal);
  EXPECT_EQ(yes.signal.pid, visible[1].pid);
  EXPECT_EQ(yes.signal.signal, SIGTERM);
  const Screen s = [&] {
    ViewState w;
    w.confirm = PendingSignal{42, 0, SIGTERM, "spin", "spin", 1};
    return layout_top(make_model(1), w, FeedStatus{}, 80, 24, {});
  }();
  EXPECT_TRUE(screen_contains(s, "Send SIGTERM to PID 42 (spin) on GPU 0? y/n"));
}

TEST(TuiKeys, OnAReplaySignalKeysAskNothingAndSayWhy) {
  ViewState v;
  v.signals_off = kReplayNoSignals;
  const auto visible = visible_processes(make_model(2).procs, v);
  handle_key(v, key::kDown, visible);
  for (int k : {'T', 'K', 'I'}) {
    EXPECT_EQ(handle_key(v, k, visible).kind, KeyAction::Redraw);
    EXPECT_FALSE(v.confirm);
    EXPECT_EQ(v.message, "replay: the processes are a recording's, not this machine's");
    const Screen s = layout_top(make_model(2), v, FeedStatus{}, 120, 24, {});
    EXPECT_TRUE(screen_contains(s, "replay: the processes are a recording's"));
  }
  handle_key(v, '?', visible);
  const Screen help = layout_top(make_model(2), v, FeedStatus{}, 120, 24, {});
  EXPECT_TRUE(
      screen_contains(help, "off: replay: the processes are a recording's, not this machine's"));
  EXPECT_FALSE(screen_contains(help, "send SIGTERM"));
}

TEST(TuiKeys, HelpOpensAndAnyKeyCloses) {
  ViewState v;
  handle_key(v, '?', {});
  EXPECT_TRUE(v.help);
  handle_key(v, 'x', {});
  EXPECT_FALSE(v.help);
  EXPECT_EQ(handle_key(v, 'z', {}).kind, KeyAction::None);  // unknown keys do nothing
}

}  // namespace
}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
// The pure side of `gpulens top`: layout at several sizes and the key handling (sort, filter,
// selection, signal confirmation).
#include "tui/layout.hpp"

#include <gtest/gtest.h>

#include <csignal>

#include "core/text_safety.hpp"
#include "tui/view_state.hpp"

namespace gpulens::tui {
namespace {

GpuView make_gpu(int index, double util, double sm) {
  GpuView g;
  g.index = index;
  g.name = "NVIDIA H100 80GB HBM3";
  g.util = util;
  g.sm_active = sm;
  g.tensor = 0;
  g.dram = 0;
  g.occupancy = 0.1;
  g.pcie_rx = 2;
  g.pcie_tx = 3;
  g.mem_used = 980;
  g.mem_total = 81559;
  g.power = 135;
  g.power_limit = 700;
  g.temp = 56;
  g.sm_clock = 1980;
  g.state = "sm_underused";
  g.state_words = "a kernel runs nearly all the time but occupies a small share of the SMs";
  g.confidence_level = "high";
  g.summary = "1 of 132 SMs busy";
  g.fix = "launch more blocks";
  for (int i = 0; i < 50; ++i) {
    g.util_history.push_back(util);
    g.sm_history.push_back(sm);
  }
  return g;
}

ProcView make_proc(std::uint32_t pid, int gpu, double mem, const std::string& cmd) {
  ProcView p;
  p.pid = pid;
  p.gpu = gpu;
  p.user = "alice";
  p.mem_mib = mem;
  p.command = cmd;
  return p;
}

TopModel make_model(int gpus) {
  TopModel m;
  m.host = "box";
  m.driver = "580.1";
  for (int i = 0; i < gpus; ++i) m.gpus.push_back(make_gpu(i, 100, 0.8));
  m.procs = {make_proc(100, 0, 500, "python train.py"), make_proc(200, 1, 1500, "spin"),
             make_proc(300, 0, 50, "jupyter")};
  return m;
}

std::size_t widest(const Screen& s) {
  std::size_t w = 0;
  for (const auto& l : s.lines) w = std::max(w, text_width(l.text()));
  return w;
}

bool contains(const Screen& s, const std::string& text) {
  return screen_text(s).find(text) != std::string::npos;
}

TEST(TuiLayout, EveryLineFitsAndTheScreenIsFilled) {
  for (auto [w, h] : {std::pair{80, 24}, {120, 40}, {200, 60}, {40, 10}, {20, 3}}) {
    const Screen s = layout_top(make_model(2), ViewState{}, FeedStatus{}, w, h, {});
    EXPECT_LE(widest(s), static_cast<std::size_t>(w)) << w << "x" << h;
    EXPECT_EQ(s.lines.size(), static_cast<std::size_t>(h)) << w << "x" << h;
  }
}

TEST(TuiLayout, EightGpusFitCompactAt80x24) {
  const Screen s = layout_top(make_model(8), ViewState{}, FeedStatus{}, 80, 24, {});
  ASSERT_EQ(s.lines.size(), 24u);
  EXPECT_NE(s.lines[1].text().find("UTIL"), std::string::npos);  // the compact heading
  for (int i = 0; i < 8; ++i) {
    EXPECT_NE(s.lines[static_cast<std::size_t>(2 + i)].text().find("sm_underused"),
              std::string::npos)
        << "GPU " << i;
  }
  EXPECT_TRUE(contains(s, "PID"));  // processes still shown
}

TEST(TuiLayout, FullViewShowsUtilBesideSmActivityStateAndFix) {
  const Screen s = layout_top(make_model(1), ViewState{}, FeedStatus{}, 120, 40, {});
  EXPECT_TRUE(contains(s, "GPU 0  NVIDIA H100 80GB HBM3"));
  const std::string text = screen_text(s);
  const auto util = text.find("util   [");
  ASSERT_NE(util, std::string::npos);
  const auto line_end = text.find('\n', util);
  EXPECT_NE(text.substr(util, line_end - util).find("SM act ["), std::string::npos);
  EXPECT_TRUE(contains(s, "100%"));
  EXPECT_TRUE(contains(s, "0.8%"));
  EXPECT_TRUE(contains(s, "sm_underused  high confidence"));
  EXPECT_TRUE(contains(s, "why 1 of 132 SMs busy"));
  EXPECT_TRUE(contains(s, "fix launch more blocks"));
  EXPECT_TRUE(contains(s, "last "));  // sparklines fit at this size
}

TEST(TuiLayout, UnsupportedSmActivityReadsNaNeverZero) {
  TopModel m = make_model(1);
  m.gpus[0].sm_active.reset();
  m.gpus[0].sm_unsupported = "GPM needs Hopper or newer";
  const Screen s = layout_top(m, ViewState{}, FeedStatus{}, 120, 40, {});
  EXPECT_TRUE(contains(s, "n/a"));
  EXPECT_TRUE(contains(s, "GPM needs Hopper or newer"));
}

TEST(TuiLayout, AsciiModeHasNoMultibyteText) {
  const Screen s = layout_top(make_model(2), ViewState{}, FeedStatus{}, 120, 40, {false});
  for (unsigned char ch : screen_text(s)) EXPECT_LT(ch, 0x80);
}

TEST(TuiLayout, AlertsAreListedUnderTheirGpu) {
  TopModel m = make_model(1);
  m.gpus[0].alerts = {"GPU 0 mostly idle while holding 79 GiB"};
  m.gpus[0].critical = true;
  const Screen s = layout_top(m, ViewState{}, FeedStatus{}, 120, 40, {});
  EXPECT_TRUE(contains(s, "! GPU 0 mostly idle while holding 79 GiB"));
  EXPECT_TRUE(contains(s, "sm_underused !"));
}

TEST(TuiLayout, HelpScreenListsKeys) {
  ViewState v;
  v.help = true;
  const Screen s = layout_top(make_model(1), v, FeedStatus{}, 80, 24, {});
  EXPECT_TRUE(contains(s, "Keys"));
  EXPECT_TRUE(contains(s, "reverse the sort order"));
}

TEST(TuiLayout, TitleSaysWhereTicksComeFrom) {
  FeedStatus feed;
  feed.live = false;
  feed.speed = 10;
  EXPECT_TRUE(contains(layout_top(make_model(1), {}, feed, 100, 20, {}), "replay x10"));
  feed.ended = true;
  EXPECT_TRUE(contains(layout_top(make_model(1), {}, feed, 100, 20, {}), "end of recording"));
}

TEST(TuiLayout, SelectedRowScrollsIntoView) {
  TopModel m = make_model(1);
  m.procs.clear();
  for (std::uint32_t i = 0; i < 40; ++i) m.procs.push_back(make_proc(1000 + i, 0, i, "p"));
  ViewState v;
  v.sort = SortKey::Pid;
  v.descending = false;
  v.selected_pid = 1039;
  const Screen s = layout_top(m, v, FeedStatus{}, 80, 24, {});
  EXPECT_TRUE(contains(s, "1039"));
  EXPECT_FALSE(contains(s, "   1000 "));
}

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
  EXPECT_TRUE(contains(s, "Send SIGTERM to PID 42 (spin) on GPU 0? y/n"));
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
    EXPECT_TRUE(contains(s, "replay: the processes are a recording's"));
  }
  handle_key(v, '?', visible);
  const Screen help = layout_top(make_model(2), v, FeedStatus{}, 120, 24, {});
  EXPECT_TRUE(contains(help, "off: replay: the processes are a recording's, not this machine's"));
  EXPECT_FALSE(contains(help, "send SIGTERM"));
}

TEST(TuiKeys, HelpOpensAndAnyKeyCloses) {
  ViewState v;
  handle_key(v, '?', {});
  EXPECT_TRUE(v.help);
  handle_key(v, 'x', {});
  EXPECT_FALSE(v.help);
  EXPECT_EQ(handle_key(v, 'z', {}).kind, KeyAction::None);  // unknown keys do nothing
}

TEST(TuiLayout, HostileNamesReachNoSpanAsControls) {
  // Any local user names a process, and top shows it to root: every span of the
  // screen is terminal_safe, and the hostile row is no wider than the screen.
  const std::string hostile =
      "N\x1b]0;PWNED\x07\x1b[2J\xc2\x9b"
      "31m\xe2\x80\xae\xff\r\n\tX";
  TopModel m = make_model(1);
  m.host = hostile;
  m.gpus[0].name = hostile;
  m.procs[0].command = hostile;
  m.procs[0].user = hostile;
  m.procs[0].container = hostile;
  for (const int w : {80, 120, 200}) {
    const Screen s = layout_top(m, ViewState{}, FeedStatus{}, w, 40, {});
    bool shown = false;
    for (const auto& line : s.lines) {
      for (const auto& span : line.spans) {
        EXPECT_TRUE(is_terminal_safe(span.text, false)) << span.text;
        shown = shown || span.text.find("]0;PWNED") != std::string::npos;
      }
      EXPECT_LE(text_width(line.text()), static_cast<std::size_t>(w)) << line.text();
    }
    EXPECT_TRUE(shown) << screen_text(s);
    EXPECT_TRUE(is_terminal_safe(screen_text(s), true));
  }
}

TEST(TuiLayout, LineTextRefusesControlsInSpansBuiltElsewhere) {
  // A span that did not come through the layout (cmd_top builds a Screen from its
  // lines) is still painted safe by --once.
  Line line;
  line.spans.push_back({"a\x1b[2Jb", Style::Normal});
  EXPECT_EQ(line.text(), "a\xef\xbf\xbd[2Jb");
}

}  // namespace
}  // namespace gpulens::tui

namespace gpulens::tui {
namespace {

TEST(TuiLayout, ContainerColumnAppearsWhenAProcessRunsInOne) {
  TopModel m = make_model(1);
  EXPECT_FALSE(contains(layout_top(m, {}, {}, 120, 30, {}), "CONTAINER"));
  m.procs[0].container = "pod:1234abcd";
  const Screen s = layout_top(m, {}, {}, 120, 30, {});
  EXPECT_TRUE(contains(s, "CONTAINER"));
  EXPECT_TRUE(contains(s, "pod:1234abcd"));
}

TEST(TuiLayout, SlurmJobTakesTheColumnAndFitsEightyColumns) {
  TopModel m = make_model(1);
  m.procs[0].container = "abcdef012345";
  m.procs[0].job = "4101.0";
  m.procs[0].account = "physics";
  const Screen s = layout_top(m, {}, {}, 80, 30, {});
  EXPECT_TRUE(contains(s, "SLURM JOB"));
  EXPECT_TRUE(contains(s, "4101.0"));
  EXPECT_FALSE(contains(s, "abcdef012345"));  // the job is what the process is charged to
  for (const auto& line : s.lines) EXPECT_LE(text_width(line.text()), 80u) << line.text();
  // The filter finds a process by its job or account.
  ViewState v;
  v.filter = "physics";
  EXPECT_EQ(visible_processes(m.procs, v).size(), 1u);
  v.filter = "4101.0";
  EXPECT_EQ(visible_processes(m.procs, v).size(), 1u);
  v.filter = "4102";
  EXPECT_TRUE(visible_processes(m.procs, v).empty());
}

TEST(TuiLayout, SaysWhetherProcessesWereListedAtAll) {
  TopModel m = make_model(1);
  m.procs.clear();
  EXPECT_TRUE(contains(layout_top(m, {}, {}, 100, 30, {}), "processes not listed"));
  m.procs_listed = true;
  EXPECT_TRUE(contains(layout_top(m, {}, {}, 100, 30, {}), "no processes on these GPUs"));
}

}  // namespace
}  // namespace gpulens::tui

namespace gpulens::tui {
namespace {

TEST(TuiMouse, HeadingSortsAndRowSelects) {
  const TopModel m = make_model(1);
  ViewState v;
  Screen s = layout_top(m, v, {}, 100, 30, {});
  ASSERT_GE(s.table.heading_row, 0);
  ASSERT_EQ(s.table.row_pids.size(), 3u);
  const int row = s.table.heading_row;
  // The PID heading spans columns 0-7.
  EXPECT_EQ(click(v, s, 3, row).kind, KeyAction::Redraw);
  EXPECT_EQ(v.sort, SortKey::Pid);
  click(v, s, 3, row);
  EXPECT_FALSE(v.descending);  // the same heading again reverses
  s = layout_top(m, v, {}, 100, 30, {});
  click(v, s, 10, s.table.heading_row + 2);
  EXPECT_EQ(v.selected_pid, s.table.row_pids[1]);
  EXPECT_EQ(click(v, s, 10, 0).kind, KeyAction::None);  // the title does nothing
  EXPECT_EQ(click(v, s, 10, s.table.heading_row + 20).kind, KeyAction::None);
}

}  // namespace
}  // namespace gpulens::tui

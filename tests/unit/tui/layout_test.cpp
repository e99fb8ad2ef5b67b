// SPDX-License-Identifier: Apache-2.0
// The pure side of `gpulens top`: layout at several sizes (its keys:
// view_state_test.cpp; its clicks: process_table_test.cpp).
#include "tui/layout.hpp"

#include <gtest/gtest.h>

#include "core/text_safety.hpp"
#include "tui/view_state.hpp"
#include "tui_support.hpp"

namespace gpulens::tui {
namespace {

using testing::make_gpu;
using testing::make_model;
using testing::make_proc;
using testing::screen_contains;

std::size_t widest(const Screen& s) {
  std::size_t w = 0;
  for (const auto& l : s.lines) w = std::max(w, text_width(l.text()));
  return w;
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
  EXPECT_TRUE(screen_contains(s, "PID"));  // processes still shown
}

TEST(TuiLayout, FullViewShowsUtilBesideSmActivityStateAndFix) {
  const Screen s = layout_top(make_model(1), ViewState{}, FeedStatus{}, 120, 40, {});
  EXPECT_TRUE(screen_contains(s, "GPU 0  NVIDIA H100 80GB HBM3"));
  const std::string text = screen_text(s);
  const auto util = text.find("util   [");
  ASSERT_NE(util, std::string::npos);
  const auto line_end = text.find('\n', util);
  EXPECT_NE(text.substr(util, line_end - util).find("SM act ["), std::string::npos);
  EXPECT_TRUE(screen_contains(s, "100%"));
  EXPECT_TRUE(screen_contains(s, "0.8%"));
  EXPECT_TRUE(screen_contains(s, "sm_underused  high confidence"));
  EXPECT_TRUE(screen_contains(s, "why 1 of 132 SMs busy"));
  EXPECT_TRUE(screen_contains(s, "fix launch more blocks"));
  EXPECT_TRUE(screen_contains(s, "last "));  // sparklines fit at this size
}

TEST(TuiLayout, UnsupportedSmActivityReadsNaNeverZero) {
  TopModel m = make_model(1);
  m.gpus[0].sm_active.reset();
  m.gpus[0].sm_unsupported = "GPM needs Hopper or newer";
  const Screen s = layout_top(m, ViewState{}, FeedStatus{}, 120, 40, {});
  EXPECT_TRUE(screen_contains(s, "n/a"));
  EXPECT_TRUE(screen_contains(s, "GPM needs Hopper or newer"));
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
  EXPECT_TRUE(screen_contains(s, "! GPU 0 mostly idle while holding 79 GiB"));
  EXPECT_TRUE(screen_contains(s, "sm_underused !"));
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
  EXPECT_TRUE(screen_contains(s, "1039"));
  EXPECT_FALSE(screen_contains(s, "   1000 "));
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

using testing::make_gpu;
using testing::make_model;
using testing::make_proc;
using testing::screen_contains;

TEST(TuiLayout, ContainerColumnAppearsWhenAProcessRunsInOne) {
  TopModel m = make_model(1);
  EXPECT_FALSE(screen_contains(layout_top(m, {}, {}, 120, 30, {}), "CONTAINER"));
  m.procs[0].container = "pod:1234abcd";
  const Screen s = layout_top(m, {}, {}, 120, 30, {});
  EXPECT_TRUE(screen_contains(s, "CONTAINER"));
  EXPECT_TRUE(screen_contains(s, "pod:1234abcd"));
}

TEST(TuiLayout, SlurmJobTakesTheColumnAndFitsEightyColumns) {
  TopModel m = make_model(1);
  m.procs[0].container = "abcdef012345";
  m.procs[0].job = "4101.0";
  m.procs[0].account = "physics";
  const Screen s = layout_top(m, {}, {}, 80, 30, {});
  EXPECT_TRUE(screen_contains(s, "SLURM JOB"));
  EXPECT_TRUE(screen_contains(s, "4101.0"));
  EXPECT_FALSE(screen_contains(s, "abcdef012345"));  // the job is what the process is charged to
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
  EXPECT_TRUE(screen_contains(layout_top(m, {}, {}, 100, 30, {}), "processes not listed"));
  m.procs_listed = true;
  EXPECT_TRUE(screen_contains(layout_top(m, {}, {}, 100, 30, {}), "no processes on these GPUs"));
}

}  // namespace
}  // namespace gpulens::tui

namespace gpulens::tui {
namespace {

using testing::make_gpu;
using testing::make_model;
using testing::make_proc;
using testing::screen_contains;

}  // namespace
}  // namespace gpulens::tui

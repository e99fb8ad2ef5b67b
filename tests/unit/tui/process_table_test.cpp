// SPDX-License-Identifier: Apache-2.0
// `gpulens top`'s process table under the mouse: a heading sorts (again:
// reverses), a row selects, anything else does nothing.
#include "tui/process_table.hpp"

#include <gtest/gtest.h>

#include "tui/layout.hpp"
#include "tui/view_state.hpp"
#include "tui_support.hpp"

namespace gpulens::tui {
namespace {

using testing::make_model;

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

// SPDX-License-Identifier: Apache-2.0
// The state table (src/diagnosis/state_table.cpp): one row per state, in the
// enum's order, and every output's id, words, colour and fixes read from it.
#include "diagnosis/state_table.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "diagnosis/fixes.hpp"
#include "diagnosis/state_colour.hpp"
#include "verdict/state_words.hpp"

namespace gpulens::diagnosis {
namespace {

TEST(StateTable, OneRowPerStateInTheEnumsOrder) {
  ASSERT_EQ(state_rows().size(), kGpuStateCount);
  std::set<std::string_view> ids, words;
  for (std::size_t i = 0; i < state_rows().size(); ++i) {
    const StateRow& row = state_rows()[i];
    EXPECT_EQ(state_index(row.state), i);
    EXPECT_FALSE(row.id.empty());
    EXPECT_FALSE(row.meaning.empty()) << row.id;
    EXPECT_FALSE(row.words.empty()) << row.id;
    EXPECT_NE(row.summary, nullptr) << row.id;
    for (const FixRow& fix : row.fixes) EXPECT_NE(fix.text, nullptr) << row.id;
    EXPECT_TRUE(ids.insert(row.id).second) << "two rows named " << row.id;
    EXPECT_TRUE(words.insert(row.words).second) << "two rows read " << row.words;
  }
}

TEST(StateTable, EveryOutputReadsTheRow) {
  for (GpuState s : all_states()) {
    const StateRow& row = state_row(s);
    EXPECT_EQ(state_id(s), row.id);
    EXPECT_EQ(state_from_id(row.id), s);
    EXPECT_EQ(state_meaning(s), row.meaning);
    EXPECT_EQ(state_colour(s).hex, row.colour.hex);
    EXPECT_EQ(verdict::state_words(s), row.words);
  }
  EXPECT_EQ(state_row(GpuState::Count).state, GpuState::Unknown);
}

TEST(StateTable, AStatesFixesAreItsRowsWhosePremisesHold) {
  // An idle GPU: its one row, whose premise always holds.
  StateFinding idle;
  idle.state = GpuState::Idle;
  const auto fx = fixes_for_state(idle, WindowStats{}, HardwareLimits{}, FixContext{});
  ASSERT_EQ(fx.size(), 1u);
  EXPECT_NE(fx[0].find("release it"), std::string::npos) << fx[0];
  // Unknown's one row needs GPM to be missing: with a reason it is offered.
  StateFinding unknown;
  HardwareLimits no_gpm;
  EXPECT_TRUE(fixes_for_state(unknown, WindowStats{}, no_gpm, FixContext{}).empty());
  no_gpm.gpm_missing_reason = "GPM needs Hopper or newer";
  EXPECT_EQ(fixes_for_state(unknown, WindowStats{}, no_gpm, FixContext{}).size(), 1u);
}

}  // namespace
}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
// One rule's alert over time, without the engine: pending until the condition
// held for for_s unbroken, resolved only after clear_for_s of clear, and the
// alert's text built on transitions only.
#include "diagnosis/alert_tracker.hpp"

#include <gtest/gtest.h>

namespace gpulens::diagnosis {
namespace {

TEST(AlertTracker, PendingNeedsAnUnbrokenConditionAndClearForDelaysResolve) {
  RuleSettings rule;
  rule.id = "r";
  rule.for_s = 10;
  rule.clear_for_s = 5;
  AlertTracker tr;
  const auto text = [] { return AlertText{"m", {}, {}}; };
  tr.update(rule, 0, 0, RuleVerdict::Fire, text);
  tr.update(rule, 0, 5, RuleVerdict::Hold, text);  // breaks the pending period
  tr.update(rule, 0, 6, RuleVerdict::Fire, text);
  tr.update(rule, 0, 15, RuleVerdict::Fire, text);
  EXPECT_TRUE(tr.take_events().empty());
  tr.update(rule, 0, 16, RuleVerdict::Fire, text);
  ASSERT_EQ(tr.take_events().size(), 1u);
  tr.update(rule, 0, 20, RuleVerdict::Clear, text);
  tr.update(rule, 0, 22, RuleVerdict::Hold, text);  // clearing interrupted
  tr.update(rule, 0, 23, RuleVerdict::Clear, text);
  tr.update(rule, 0, 27, RuleVerdict::Clear, text);
  EXPECT_TRUE(tr.take_events().empty());
  tr.update(rule, 0, 28, RuleVerdict::Clear, text);
  const auto events = tr.take_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, AlertEvent::Kind::Resolved);
  EXPECT_FALSE(tr.is_firing("r", 0));
}

TEST(AlertTracker, TextIsBuiltOnlyOnTransitions) {
  RuleSettings rule;
  rule.id = "r";
  AlertTracker tr;
  int built = 0;
  const auto text = [&built] {
    ++built;
    return AlertText{"m", {}, {}};
  };
  for (int i = 0; i < 100; ++i) tr.update(rule, 0, i, RuleVerdict::Fire, text);
  EXPECT_EQ(built, 1);
}

}  // namespace
}  // namespace gpulens::diagnosis

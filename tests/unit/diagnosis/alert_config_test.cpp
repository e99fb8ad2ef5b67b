// SPDX-License-Identifier: Apache-2.0
// The alert rules' table and settings (alert_config.cpp): lookups, defaults,
// parameters, the comparison operators of custom rules.
#include "diagnosis/alert_config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace gpulens::diagnosis {
namespace {

TEST(AlertConfig, BuiltInRuleIdsAreUniqueAndFound) {
  std::set<std::string_view> ids;
  for (const auto& spec : builtin_rule_specs()) {
    EXPECT_TRUE(ids.insert(spec.id).second) << spec.id;
    EXPECT_EQ(find_rule_spec(spec.id), &spec);
    EXPECT_FALSE(spec.doc.empty()) << spec.id;
  }
  EXPECT_TRUE(ids.contains("high_util_low_activity"));
  EXPECT_TRUE(ids.contains("gpu_lost"));
  EXPECT_EQ(find_rule_spec("no_such_rule"), nullptr);
  EXPECT_EQ(find_rule_spec("gpu_lost")->severity, Severity::Critical);
}

TEST(AlertConfig, DefaultSettingsCopyTheSpec) {
  const RuleSpec* spec = find_rule_spec("high_util_low_activity");
  ASSERT_NE(spec, nullptr);
  const RuleSettings s = default_rule_settings(*spec);
  EXPECT_EQ(s.id, "high_util_low_activity");
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.severity, Severity::Warning);
  EXPECT_EQ(s.for_s, 30);
  EXPECT_EQ(s.params.size(), spec->params.size());
  EXPECT_EQ(s.param("util_min"), 80);
  EXPECT_EQ(s.param("sm_active_clear"), 35);
}

TEST(AlertConfig, SetParamReplacesOrAdds) {
  RuleSettings s;
  EXPECT_EQ(s.param("missing"), 0);
  s.set_param("a", 1);
  s.set_param("b", 2);
  s.set_param("a", 3);
  ASSERT_EQ(s.params.size(), 2U);
  EXPECT_EQ(s.param("a"), 3);
  EXPECT_EQ(s.param("b"), 2);
}

TEST(AlertConfig, CompareOperatorsRoundTripTheirText) {
  for (const char* text : {">", ">=", "<", "<=", "==", "!="}) {
    const auto op = compare_op_from_text(text);
    ASSERT_TRUE(op.has_value()) << text;
    EXPECT_EQ(compare_op_text(*op), text);
  }
  EXPECT_FALSE(compare_op_from_text("=>").has_value());
  EXPECT_FALSE(compare_op_from_text("").has_value());
}

TEST(AlertConfig, CompareAtAndAroundTheThreshold) {
  EXPECT_TRUE(compare(2, CompareOp::Greater, 1));
  EXPECT_FALSE(compare(1, CompareOp::Greater, 1));
  EXPECT_TRUE(compare(1, CompareOp::GreaterEqual, 1));
  EXPECT_FALSE(compare(0.5, CompareOp::GreaterEqual, 1));
  EXPECT_TRUE(compare(0, CompareOp::Less, 1));
  EXPECT_FALSE(compare(1, CompareOp::Less, 1));
  EXPECT_TRUE(compare(1, CompareOp::LessEqual, 1));
  EXPECT_FALSE(compare(2, CompareOp::LessEqual, 1));
  EXPECT_TRUE(compare(1, CompareOp::Equal, 1));
  EXPECT_FALSE(compare(1, CompareOp::NotEqual, 1));
  EXPECT_TRUE(compare(2, CompareOp::NotEqual, 1));
}

TEST(AlertConfig, DerivedKeysIncludeEfficiency) {
  const auto& keys = derived_metric_keys();
  EXPECT_NE(std::find(keys.begin(), keys.end(), "efficiency"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), "power_pct"), keys.end());
}

}  // namespace
}  // namespace gpulens::diagnosis

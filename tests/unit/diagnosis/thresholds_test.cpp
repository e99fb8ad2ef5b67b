// SPDX-License-Identifier: Apache-2.0
// The table of the classifier's thresholds that the config's [thresholds] keys
// and docs read: every field of Thresholds once, under a key of its own, with a
// default inside the range the config accepts and a line that says what it is.
#include "diagnosis/thresholds.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace gpulens::diagnosis {
namespace {

TEST(Thresholds, EveryFieldHasOneRowAndOneKey) {
  const auto& specs = threshold_specs();
  // Thresholds holds doubles only: a field added without a row leaves a gap here.
  static_assert(sizeof(Thresholds) % sizeof(double) == 0);
  EXPECT_EQ(specs.size(), sizeof(Thresholds) / sizeof(double));
  std::set<std::string_view> keys;
  Thresholds marked;
  for (const auto& s : specs) {
    EXPECT_TRUE(keys.insert(s.key).second) << "key twice: " << s.key;
    // Each row points at a field no other row points at.
    EXPECT_NE(marked.*(s.field), -1.0) << s.key << " shares its field with another row";
    marked.*(s.field) = -1.0;
  }
}

TEST(Thresholds, DefaultsLieInTheRangeTheConfigAccepts) {
  const Thresholds defaults;
  for (const auto& s : threshold_specs()) {
    EXPECT_LT(s.min, s.max) << s.key;
    EXPECT_GE(defaults.*(s.field), s.min) << s.key;
    EXPECT_LE(defaults.*(s.field), s.max) << s.key;
    EXPECT_FALSE(s.doc.empty()) << s.key;
    EXPECT_EQ(s.key.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string_view::npos)
        << s.key << ": a TOML key as the docs write it";
  }
}

TEST(Thresholds, SharesAreBoundedByOneAndPercentagesByAHundred) {
  for (const auto& s : threshold_specs()) {
    const std::string key(s.key);
    if (key.ends_with("_share_min") || key.ends_with("_share_max") || key.ends_with("_ratio_min") ||
        key.ends_with("_ratio_max")) {
      EXPECT_EQ(s.max, 1) << key;
    }
    if (key.ends_with("_util_max") || key.ends_with("_points")) {
      EXPECT_EQ(s.max, 100) << key;
    }
  }
}

}  // namespace
}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
// core/intervals.hpp: the interval merge shared by the injection library's
// collector and the kernel view, one table of cases for both number types.
#include "core/intervals.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace gpulens {
namespace {

using Ns = std::vector<std::pair<std::int64_t, std::int64_t>>;

struct Case {
  const char* what;
  Ns in;
  Ns merged;
};

const Case kCases[] = {
    {"empty", {}, {}},
    {"one", {{3, 7}}, {{3, 7}}},
    {"disjoint stay apart", {{1, 2}, {4, 5}}, {{1, 2}, {4, 5}}},
    {"touching join", {{1, 3}, {3, 5}}, {{1, 5}}},
    {"overlapping join", {{1, 4}, {3, 6}}, {{1, 6}}},
    {"nested keep the outer end", {{1, 10}, {2, 3}, {4, 5}}, {{1, 10}}},
    {"unsorted are sorted first", {{8, 9}, {1, 2}, {5, 6}, {1, 3}}, {{1, 3}, {5, 6}, {8, 9}}},
    {"zero-length alone is kept", {{4, 4}}, {{4, 4}}},
    {"zero-length inside joins", {{1, 5}, {2, 2}}, {{1, 5}}},
    {"zero-length at an end joins", {{1, 5}, {5, 5}}, {{1, 5}}},
    {"zero-length apart stays", {{1, 2}, {3, 3}}, {{1, 2}, {3, 3}}},
    {"duplicates join", {{2, 4}, {2, 4}}, {{2, 4}}},
    {"negative times (before the base)", {{-5, -1}, {-2, 3}}, {{-5, 3}}},
    {"chain of touching", {{0, 1}, {2, 3}, {1, 2}}, {{0, 3}}},
};

TEST(Intervals, MergeTable) {
  for (const auto& c : kCases) {
    Ns v = c.in;
    merge_intervals(v);
    EXPECT_EQ(v, c.merged) << c.what;
  }
}

TEST(Intervals, SameCasesInSeconds) {
  for (const auto& c : kCases) {
    std::vector<std::pair<double, double>> v, want;
    const auto us = [](std::int64_t t) { return static_cast<double>(t) * 1e-6; };
    for (const auto& [a, b] : c.in) v.emplace_back(us(a), us(b));
    for (const auto& [a, b] : c.merged) want.emplace_back(us(a), us(b));
    merge_intervals(v);
    EXPECT_EQ(v, want) << c.what;
  }
}

TEST(Intervals, MergingTwiceChangesNothing) {
  for (const auto& c : kCases) {
    Ns v = c.in;
    merge_intervals(v);
    const Ns once = v;
    merge_intervals(v);
    EXPECT_EQ(v, once) << c.what;
  }
}

}  // namespace
}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
// Numbers into words (core/text_units.hpp): every output says durations, shares,
// sizes, rates and kernel times through these, so each style is one table here.
#include "core/text_units.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>

namespace gpulens {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Row {
  double in;
  const char* out;
};

TEST(TextUnits, DurationsInProse) {
  const Row rows[] = {
      {0, "0.0 s"},         {0.04, "0.0 s"},
      {0.05, "0.1 s"},      {12.34, "12.3 s"},
      {59.94, "59.9 s"},    {59.96, "1m 00s"},  // rounds up to a minute: never "60.0 s"
      {60, "1m 00s"},       {125, "2m 05s"},
      {3599.4, "59m 59s"},  {3599.5, "1h 00m 00s"},
      {3723, "1h 02m 03s"}, {100 * 3600 + 61, "100h 01m 01s"},
      {-3, "0.0 s"},  // a negative span (clocks that stepped back) reads as none
      {kNaN, "n/a"},        {kInf, "n/a"},
      {-kInf, "n/a"},
  };
  for (const auto& r : rows) EXPECT_EQ(duration_text(r.in), r.out) << r.in;
}

TEST(TextUnits, DurationsCompactForTop) {
  const Row rows[] = {
      {0, "0s"},          {0.4, "0s"},       {0.5, "1s"},
      {45, "45s"},        {59.5, "1m00s"},   {130, "2m10s"},
      {3599.4, "59m59s"}, {3599.5, "1h00m"}, {3 * 3600 + 300, "3h05m"},
      {-5, "0s"},         {kNaN, "n/a"},     {kInf, "n/a"},
  };
  for (const auto& r : rows) EXPECT_EQ(duration_compact(r.in), r.out) << r.in;
}

struct ShareRow {
  double in;
  int decimals;
  const char* out;
};

TEST(TextUnits, SharesOfOne) {
  const ShareRow rows[] = {
      {0, 0, "0 %"},
      {0.45, 0, "45 %"},
      {0.455, 0, "46 %"},
      {1.0, 0, "100 %"},
      {1.0, 1, "100.0 %"},
      {0.123, 1, "12.3 %"},
      {0.0005, 0, "0 %"},
      {0.0006, 1, "0.1 %"},
      {0.0005, kSmallKept, "0.05 %"},
      {0.0075, kSmallKept, "0.75 %"},
      {0.5, kSmallKept, "50 %"},
      {1.25, 0, "125 %"},  // said as it is: callers clamp where more than all is impossible
      {-0.001, 0, "0 %"},  // never "-0 %"
      {-0.25, 0, "-25 %"},
      {kNaN, 0, "n/a"},
      {kInf, 1, "n/a"},
  };
  for (const auto& r : rows) EXPECT_EQ(share_text(r.in, r.decimals), r.out) << r.in;
  EXPECT_EQ(share_text(std::optional<double>{}, 1), "n/a");
  EXPECT_EQ(share_text(std::optional<double>{0.5}, 1), "50.0 %");
}

TEST(TextUnits, PointsOfAHundred) {
  const ShareRow rows[] = {
      {0, 0, "0 %"},
      {45, 0, "45 %"},
      {100, 0, "100 %"},
      {12.34, 1, "12.3 %"},
      {0.75, kSmallKept, "0.75 %"},  // 1 busy SM of 132
      {0.004, kSmallKept, "0.00 %"},
      {1, kSmallKept, "1 %"},
      {99.6, kSmallKept, "100 %"},
      {0.4, 0, "0 %"},
      {kNaN, 0, "n/a"},
      {-kInf, kSmallKept, "n/a"},
  };
  for (const auto& r : rows) EXPECT_EQ(points_text(r.in, r.decimals), r.out) << r.in;
  EXPECT_EQ(points_text(std::optional<double>{}), "n/a");
  EXPECT_EQ(points_text(std::optional<double>{45.0}), "45 %");
  // The two scales of one figure say the same words.
  EXPECT_EQ(points_text(45.0), share_text(0.45));
}

TEST(TextUnits, PointsCompactForTopColumns) {
  const Row rows[] = {
      {0, "0%"},     {0.04, "0.0%"}, {0.75, "0.8%"},  {9.94, "9.9%"}, {9.95, "10%"},
      {45.4, "45%"}, {100, "100%"},  {-0.5, "-0.5%"}, {kNaN, "n/a"},  {kInf, "n/a"},
  };
  for (const auto& r : rows) EXPECT_EQ(points_compact(r.in), r.out) << r.in;
}

TEST(TextUnits, SizesAndRates) {
  EXPECT_EQ(gib_text(0), "0.0 GiB");
  EXPECT_EQ(gib_text(3584), "3.5 GiB");
  EXPECT_EQ(gib_text(81559, 0), "80 GiB");
  EXPECT_EQ(gib_text(kNaN), "n/a");
  const Row rates[] = {
      {0, "0 MiB/s"},        {14.4, "14 MiB/s"},    {10239, "10239 MiB/s"},
      {10240, "10.0 GiB/s"}, {51200, "50.0 GiB/s"}, {kNaN, "n/a"},
  };
  for (const auto& r : rates) EXPECT_EQ(mib_rate_text(r.in), r.out) << r.in;
  EXPECT_EQ(gb_rate_text(12.345), "12.3 GB/s");
  EXPECT_EQ(gb_rate_text(0), "0.0 GB/s");
  EXPECT_EQ(gb_rate_text(kInf), "n/a");
}

TEST(TextUnits, KernelScaleTimes) {
  const Row rows[] = {
      {0, "0 ns"},           {1e-9, "1 ns"},          {350e-9, "350 ns"},
      {999.4e-9, "999 ns"},  {999.6e-9, "1.0 µs"},  // the unit follows the rounded figure
      {12.34e-6, "12.3 µs"}, {999.94e-6, "999.9 µs"}, {999.96e-6, "1.00 ms"},
      {1.25e-3, "1.25 ms"},  {999.996e-3, "1.00 s"},  {2, "2.00 s"},
      {-1e-6, "0 ns"},       {kNaN, "n/a"},           {kInf, "n/a"},
  };
  for (const auto& r : rows) EXPECT_EQ(kernel_time_text(r.in), r.out) << r.in;
}

}  // namespace
}  // namespace gpulens

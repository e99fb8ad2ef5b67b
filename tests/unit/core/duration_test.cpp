// SPDX-License-Identifier: Apache-2.0
// The one grammar for durations and times (core/duration.hpp, docs/durations.md),
// used by the config, the API's ?from=/?to=/?step= and the CLI's --from/--to:
// every accepted and refused text lives in the two tables below.
#include "core/duration.hpp"

#include <gtest/gtest.h>

#include <ctime>
#include <string>

namespace gpulens {
namespace {

struct Accepted {
  const char* text;
  double seconds;
};

// Durations, in seconds.
constexpr Accepted kDurations[] = {
    {"90", 90},
    {"90s", 90},
    {"0", 0},
    {"0.5", 0.5},
    {".5", 0.5},
    {"250ms", 0.25},
    {"15m", 900},
    {"10min", 600},
    {"1.5h", 5400},
    {"7d", 7 * 86400},
    {"90d", 90 * 86400},
    {"2w", 14 * 86400},
    {"1h30m", 5400},
    {"1h 30m", 5400},
    {"90 s", 90},
    {"1m30s", 90},
    {"1d2h", 93600},
    {"30d", 30 * 86400},
    {"10000000000", 1e10},
};

// Durations refused: not our grammar, or nonsense (sign, exponent, inf, nan,
// hex, stray spaces, unknown units, beyond 1e10 seconds).
constexpr const char* kBadDurations[] = {
    "",
    "m",
    "5x",
    "5mm",
    "-5",
    "-5s",
    "+5",
    "1e3",
    "inf",
    "nan",
    "0x10",
    " 5",
    "5 ",
    "5  s",
    "5 days",
    "soon",
    "1h30",
    "h1",
    "1..5s",
    "1.5.h",
    "1h,30m",
    "100000000000000000000000",
    "200000000000d",
    "10000000001",
};

TEST(Duration, AcceptedTable) {
  for (const auto& [text, seconds] : kDurations) {
    const auto d = parse_duration(text);
    ASSERT_TRUE(d.ok()) << "'" << text << "': " << d.error().message;
    EXPECT_DOUBLE_EQ(*d, seconds) << text;
  }
}

TEST(Duration, RefusedTableSaysWhatWouldWork) {
  for (const char* text : kBadDurations) {
    const auto d = parse_duration(text);
    ASSERT_FALSE(d.ok()) << "'" << text << "' parsed as " << *d;
    EXPECT_NE(d.error().message.find(std::string("'") + text + "'"), std::string::npos)
        << d.error().message;
  }
  EXPECT_NE(parse_duration("5x").error().message.find("such as 90, 250ms, 15m"), std::string::npos);
  EXPECT_NE(parse_duration("200000000000d").error().message.find("longer than any history"),
            std::string::npos);
}

constexpr double kNow = 1795289145.5;
constexpr double kTen = 1795255200;  // 2026-11-21T10:00:00Z

// Times, in Unix seconds (relative ones from kNow).
constexpr Accepted kTimes[] = {
    {"now", kNow},
    {"-2h", kNow - 7200},
    {"-30m", kNow - 1800},
    {"-90s", kNow - 90},
    {"-90", kNow - 90},
    {"-250ms", kNow - 0.25},
    {"-7d", kNow - 7 * 86400},
    {"-1w", kNow - 7 * 86400},
    {"-1h30m", kNow - 5400},
    {"now-1m", kNow - 60},
    {"now-1.5h", kNow - 5400},
    {"1795289145", 1795289145},
    {"1795289145.25", 1795289145.25},
    {"1732200000.5", 1732200000.5},
    {"2026-11-21T10:00:00Z", kTen},
    {"2026-11-21t10:00:00z", kTen},
    {"2026-11-21 10:00:00Z", kTen},
    {"2026-11-21T10:00Z", kTen},
    {"2026-11-21T11:00:00+01:00", kTen},
    {"2026-11-21T04:30:00-0530", kTen},
    {"2026-11-21T12:00:00+02", kTen},
    {"2026-11-21T10:00:00.250Z", kTen + 0.25},
    {"2024-02-29T00:00:00Z", 1709164800},  // a leap day
};

constexpr const char* kBadTimes[] = {
    "",
    "yesterday",
    "2h",  // a duration is not a time: "-2h" is
    "now+1h",
    "-",
    "--5m",
    "-2x",
    "-inf",
    "-nan",
    "12abc",
    "1e9",
    "nowish",
    "now-",
    "inf",
    "nan",
    "100000000000000000000000",
    "-200000000000d",
    "2026-13-01T00:00:00Z",
    "2026-02-30",
    "2026-11-21T24:00:00Z",
    "2026-11-21T10:60Z",
    "2026-11-21T10:00:00+25:00",
    "2026-11-21T10",
    "2026-11-21T10:00:00Zjunk",
    "2026-11-21T10:00:00.",
};

TEST(Time, AcceptedTable) {
  for (const auto& [text, seconds] : kTimes) {
    const auto t = parse_time(text, kNow);
    ASSERT_TRUE(t.ok()) << "'" << text << "': " << t.error().message;
    EXPECT_DOUBLE_EQ(*t, seconds) << text;
  }
}

TEST(Time, RefusedTableSaysWhatWouldWork) {
  for (const char* text : kBadTimes) {
    const auto t = parse_time(text, kNow);
    ASSERT_FALSE(t.ok()) << "'" << text << "' parsed as " << *t;
    EXPECT_NE(t.error().message.find(std::string("'") + text + "'"), std::string::npos)
        << t.error().message;
  }
  EXPECT_NE(parse_time("yesterday", kNow).error().message.find("RFC 3339"), std::string::npos);
}

// Without an offset a calendar time is local, as mktime reads the same fields.
TEST(Time, WithoutAnOffsetIsLocal) {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 10;
  tm.tm_mday = 21;
  tm.tm_hour = 10;
  tm.tm_isdst = -1;
  EXPECT_DOUBLE_EQ(*parse_time("2026-11-21T10:00:00", kNow), static_cast<double>(std::mktime(&tm)));
  std::tm midnight{};
  midnight.tm_year = 2026 - 1900;
  midnight.tm_mon = 10;
  midnight.tm_mday = 21;
  midnight.tm_isdst = -1;
  EXPECT_DOUBLE_EQ(*parse_time("2026-11-21", kNow), static_cast<double>(std::mktime(&midnight)));
}

TEST(Time, FormatsInUtcAndReadsBack) {
  EXPECT_EQ(format_utc_time(kTen), "2026-11-21T10:00:00Z");
  EXPECT_EQ(format_utc_time(kTen + 0.9), "2026-11-21T10:00:00Z");
  EXPECT_DOUBLE_EQ(*parse_time(format_utc_time(kTen), kNow), kTen);
}

}  // namespace
}  // namespace gpulens

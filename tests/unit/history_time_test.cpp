// The times a person types for `gpulens report --from/--to`, and where the agent
// keeps its history unless told otherwise (store/history_time.hpp).
#include "store/history_time.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <string>

namespace gpulens::store {
namespace {

TEST(HistoryTime, ParsesWhatPeopleType) {
  const double now = 1795289145.5;
  const auto at = [&](const char* text) {
    auto t = parse_history_time(text, now);
    EXPECT_TRUE(t.ok()) << text << ": " << (t.ok() ? "" : t.error().message);
    return t.ok() ? *t : -1.0;
  };
  // 2026-11-21T10:00:00Z
  const double ten = 1795255200;
  EXPECT_DOUBLE_EQ(at("2026-11-21T10:00:00Z"), ten);
  EXPECT_DOUBLE_EQ(at("2026-11-21t10:00:00z"), ten);
  EXPECT_DOUBLE_EQ(at("2026-11-21 10:00:00Z"), ten);
  EXPECT_DOUBLE_EQ(at("2026-11-21T10:00Z"), ten);
  EXPECT_DOUBLE_EQ(at("2026-11-21T11:00:00+01:00"), ten);
  EXPECT_DOUBLE_EQ(at("2026-11-21T04:30:00-0530"), ten);
  EXPECT_DOUBLE_EQ(at("2026-11-21T12:00:00+02"), ten);
  EXPECT_DOUBLE_EQ(at("2026-11-21T10:00:00.250Z"), ten + 0.25);
  EXPECT_DOUBLE_EQ(at("2024-02-29T00:00:00Z"), 1709164800);  // a leap day
  EXPECT_DOUBLE_EQ(at("1795289145"), 1795289145);
  EXPECT_DOUBLE_EQ(at("1795289145.25"), 1795289145.25);
  EXPECT_DOUBLE_EQ(at("now"), now);
  EXPECT_DOUBLE_EQ(at("-2h"), now - 7200);
  EXPECT_DOUBLE_EQ(at("-30m"), now - 1800);
  EXPECT_DOUBLE_EQ(at("-90s"), now - 90);
  EXPECT_DOUBLE_EQ(at("-90"), now - 90);
  EXPECT_DOUBLE_EQ(at("-7d"), now - 7 * 86400);
  EXPECT_DOUBLE_EQ(at("-1w"), now - 7 * 86400);
  EXPECT_DOUBLE_EQ(at("-1h30m"), now - 5400);
  EXPECT_DOUBLE_EQ(at("now-1.5h"), now - 5400);

  // Without an offset: local time, as mktime reads the same fields.
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 10;
  tm.tm_mday = 21;
  tm.tm_hour = 10;
  tm.tm_isdst = -1;
  EXPECT_DOUBLE_EQ(at("2026-11-21T10:00:00"), static_cast<double>(std::mktime(&tm)));
  std::tm midnight{};
  midnight.tm_year = 2026 - 1900;
  midnight.tm_mon = 10;
  midnight.tm_mday = 21;
  midnight.tm_isdst = -1;
  EXPECT_DOUBLE_EQ(at("2026-11-21"), static_cast<double>(std::mktime(&midnight)));

  for (const char* bad :
       {"", "yesterday", "2h", "now+1h", "-", "-2x", "1e9", "nowish", "2026-13-01T00:00:00Z",
        "2026-02-30", "2026-11-21T24:00:00Z", "2026-11-21T10:60Z", "2026-11-21T10:00:00+25:00",
        "2026-11-21T10", "2026-11-21T10:00:00Zjunk", "2026-11-21T10:00:00."}) {
    auto t = parse_history_time(bad, now);
    ASSERT_FALSE(t.ok()) << "'" << bad << "' parsed as " << *t;
    EXPECT_NE(t.error().message.find("RFC 3339"), std::string::npos);
  }
}

TEST(HistoryTime, FormatsInUtc) {
  EXPECT_EQ(format_history_time(1795255200), "2026-11-21T10:00:00Z");
  EXPECT_EQ(format_history_time(1795255200.9), "2026-11-21T10:00:00Z");
}

TEST(HistoryPath, IsWhereTheAgentWritesByDefault) {
  const char* old = std::getenv("STATE_DIRECTORY");
  const std::string saved = old ? old : "";
  setenv("STATE_DIRECTORY", "/run/state/gpulens:/other", 1);
  EXPECT_EQ(default_history_path(), "/run/state/gpulens/history.db");
  if (old)
    setenv("STATE_DIRECTORY", saved.c_str(), 1);
  else
    unsetenv("STATE_DIRECTORY");
  if (!old && geteuid() == 0) {
    EXPECT_EQ(default_history_path(), "/var/lib/gpulens/history.db");
  }
}

}  // namespace
}  // namespace gpulens::store

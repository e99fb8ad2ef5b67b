// SPDX-License-Identifier: Apache-2.0
#include "core/duration.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>

namespace gpulens {
namespace {

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// Digits with an optional fraction at the front of `text` ("12", "1.5", ".5"),
// advancing past them; nullopt when `text` does not start with one.
std::optional<double> take_number(std::string_view& text) {
  std::size_t n = 0;
  while (n < text.size() && (is_digit(text[n]) || text[n] == '.')) ++n;
  if (n == 0) return std::nullopt;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + n, v, std::chars_format::fixed);
  if (ec != std::errc() || ptr != text.data() + n || !std::isfinite(v)) return std::nullopt;
  text.remove_prefix(n);
  return v;
}

std::optional<double> unit_seconds(std::string_view unit) {
  if (unit == "ms") return 0.001;
  if (unit == "s") return 1;
  if (unit == "m" || unit == "min") return 60;
  if (unit == "h") return 3600;
  if (unit == "d") return 86400;
  if (unit == "w") return 7 * 86400;
  return std::nullopt;
}

void skip_one_space(std::string_view& text) {
  if (!text.empty() && text.front() == ' ') text.remove_prefix(1);
}

std::optional<double> duration_seconds(std::string_view text) {
  if (text.empty() || text.front() == ' ' || text.back() == ' ') return std::nullopt;
  auto number = take_number(text);
  if (!number) return std::nullopt;
  if (text.empty()) return number;  // a bare number is seconds
  double total = 0;
  while (true) {
    skip_one_space(text);
    std::size_t n = 0;
    while (n < text.size() && std::isalpha(static_cast<unsigned char>(text[n])) != 0) ++n;
    const auto unit = unit_seconds(text.substr(0, n));
    if (!unit) return std::nullopt;
    total += *number * *unit;
    text.remove_prefix(n);
    if (text.empty()) return total;
    skip_one_space(text);
    number = take_number(text);
    if (!number) return std::nullopt;
  }
}

// Exactly `n` digits at `pos`, advancing it.
std::optional<int> digits(std::string_view text, std::size_t& pos, std::size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (!is_digit(text[i])) return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  pos += n;
  return v;
}

bool take(std::string_view text, std::size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// RFC 3339 and the common ISO 8601 forms around it; nullopt when `text` is not
// one. Without an offset the time is local, as `date` would read it.
std::optional<double> calendar_time(std::string_view text) {
  std::size_t pos = 0;
  const auto y = digits(text, pos, 4);
  if (!y || !take(text, pos, '-')) return std::nullopt;
  const auto mo = digits(text, pos, 2);
  if (!mo || !take(text, pos, '-')) return std::nullopt;
  const auto d = digits(text, pos, 2);
  if (!d) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year{*y},
                                         std::chrono::month{static_cast<unsigned>(*mo)},
                                         std::chrono::day{static_cast<unsigned>(*d)}};
  if (!date.ok()) return std::nullopt;
  int hour = 0, minute = 0;
  double second = 0;
  std::optional<double> offset;  // seconds east of UTC
  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ') return std::nullopt;
    ++pos;
    const auto h = digits(text, pos, 2);
    if (!h || !take(text, pos, ':')) return std::nullopt;
    const auto mi = digits(text, pos, 2);
    if (!mi) return std::nullopt;
    hour = *h;
    minute = *mi;
    if (take(text, pos, ':')) {
      const auto s = digits(text, pos, 2);
      if (!s) return std::nullopt;
      second = *s;
      if (take(text, pos, '.') || take(text, pos, ',')) {
        std::size_t n = 0;
        double scale = 0.1;
        while (pos < text.size() && is_digit(text[pos])) {
          second += (text[pos++] - '0') * scale;
          scale /= 10;
          ++n;
        }
        if (n == 0) return std::nullopt;
      }
    }
    if (hour > 23 || minute > 59 || second >= 61) return std::nullopt;
    if (take(text, pos, 'Z') || take(text, pos, 'z')) {
      offset = 0;
    } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      const double sign = text[pos++] == '-' ? -1 : 1;
      const auto oh = digits(text, pos, 2);
      if (!oh) return std::nullopt;
      take(text, pos, ':');
      int om = 0;
      if (pos < text.size()) {
        const auto m = digits(text, pos, 2);
        if (!m) return std::nullopt;
        om = *m;
      }
      if (*oh > 23 || om > 59) return std::nullopt;
      offset = sign * (*oh * 3600 + om * 60);
    }
    if (pos != text.size()) return std::nullopt;
  }
  const double clock = hour * 3600.0 + minute * 60.0 + second;
  if (offset) {
    const auto days = std::chrono::sys_days(date).time_since_epoch().count();
    return static_cast<double>(days) * 86400.0 + clock - *offset;
  }
  std::tm tm{};
  tm.tm_year = *y - 1900;
  tm.tm_mon = *mo - 1;
  tm.tm_mday = *d;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = static_cast<int>(second);
  tm.tm_isdst = -1;  // whatever daylight saving time says on that date
  const std::time_t local = std::mktime(&tm);
  if (local == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<double>(local) + (second - std::floor(second));
}

}  // namespace

Result<double> parse_duration(std::string_view text) {
  const auto seconds = duration_seconds(text);
  if (!seconds) {
    return Error{
        fmt::format("'{}' is not a duration: give a number of seconds or a number with a unit "
                    "(ms, s, m, min, h, d, w), such as 90, 250ms, 15m, 1.5h, 7d or 1h30m",
                    text)};
  }
  if (*seconds > kMaxTimeTextSeconds)
    return Error{fmt::format("'{}' is longer than any history (at most {:.0f} seconds)", text,
                             kMaxTimeTextSeconds)};
  return *seconds;
}

Result<double> parse_time(std::string_view text, double now) {
  const auto bad = [&] {
    return Error{fmt::format(
        "'{}' is not a time: give RFC 3339 (2026-11-21T10:00:00Z, 2026-11-21T11:00:00+01:00; "
        "without an offset, local time), Unix seconds, 'now', or a time before now such as "
        "-2h, -30m, -7d, now-1h30m",
        text)};
  };
  if (text == "now") return now;
  std::string_view rel = text;
  if (rel.starts_with("now")) rel.remove_prefix(3);
  if (rel.starts_with('-')) {
    const auto d = duration_seconds(rel.substr(1));
    if (!d) return bad();
    if (*d > kMaxTimeTextSeconds)
      return Error{fmt::format("'{}' is further back than any history (at most {:.0f} seconds)",
                               text, kMaxTimeTextSeconds)};
    return now - *d;
  }
  if (rel.size() != text.size()) return bad();  // "now" followed by anything but "-..."
  std::string_view rest = text;
  if (const auto t = take_number(rest); t && rest.empty()) {
    if (*t > kMaxTimeTextSeconds)
      return Error{fmt::format("'{}' is later than the year 2286 (Unix seconds above {:.0f})", text,
                               kMaxTimeTextSeconds)};
    return *t;
  }
  if (const auto t = calendar_time(text)) return *t;
  return bad();
}

std::string format_utc_time(double t) {
  const auto secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  const auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf, n);
}

}  // namespace gpulens

#include "store/history_time.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <optional>

namespace gpulens::store {
namespace {

// ---- times typed by a person ----

// Digits with an optional fraction, the whole of `text`.
std::optional<double> plain_number(std::string_view text) {
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text.front())) != 0 || text.front() == '.'))
    return std::nullopt;
  double v = 0;
  const auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::fixed);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// "90", "30m", "1h30m", "1.5d": seconds. A bare number is seconds.
std::optional<double> duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (auto v = plain_number(text)) return v;
  double total = 0;
  while (!text.empty()) {
    std::size_t n = 0;
    while (n < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[n])) != 0 || text[n] == '.'))
      ++n;
    const auto value = plain_number(text.substr(0, n));
    if (!value || n == text.size()) return std::nullopt;
    double unit = 0;
    switch (text[n]) {
      case 's':
        unit = 1;
        break;
      case 'm':
        unit = 60;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'd':
        unit = 86400;
        break;
      case 'w':
        unit = 7 * 86400;
        break;
      default:
        return std::nullopt;
    }
    total += *value * unit;
    text.remove_prefix(n + 1);
  }
  return total;
}

// Exactly `n` digits at `pos`, advancing it.
std::optional<int> digits(std::string_view text, std::size_t& pos, std::size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) == 0) return std::nullopt;
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
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) != 0) {
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

std::string default_history_path() {
  if (const char* dir = std::getenv("STATE_DIRECTORY"); dir && *dir) {
    const std::string first(dir);
    return first.substr(0, first.find(':')) + "/history.db";
  }
  if (geteuid() == 0) return "/var/lib/gpulens/history.db";
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/gpulens/history.db";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.local/state/gpulens/history.db";
  return "gpulens-history.db";
}

Result<double> parse_history_time(std::string_view text, double now) {
  const auto bad = [&] {
    return Error{fmt::format(
        "'{}' is not a time: give RFC 3339 (2026-11-21T10:00:00Z, 2026-11-21T11:00:00+01:00; "
        "without an offset, local time), Unix seconds, 'now', or a time before now such as "
        "-2h, -30m, -7d",
        text)};
  };
  if (text == "now") return now;
  std::string_view rel = text;
  if (rel.starts_with("now")) rel.remove_prefix(3);
  if (rel.starts_with('-')) {
    if (const auto d = duration(rel.substr(1))) return now - *d;
    return bad();
  }
  if (rel.size() != text.size()) return bad();  // "now" followed by anything but "-..."
  if (const auto t = plain_number(text)) return *t;
  if (const auto t = calendar_time(text)) return *t;
  return bad();
}

std::string format_history_time(double t) {
  const auto secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  const auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf, n);
}

}  // namespace gpulens::store

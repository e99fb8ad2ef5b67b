// SPDX-License-Identifier: Apache-2.0
#include "inject/schedule.hpp"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <vector>

namespace gpulens::inject {
namespace {

std::int64_t to_ns(double s) {
  return static_cast<std::int64_t>(std::llround(s * 1e9));
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end;
}

}  // namespace

std::string format_schedule(const TraceSchedule& s) {
  // No fmt here: the injection library links nothing it does not need.
  char text[128];
  std::snprintf(text, sizeof text, "%" PRId64 ":%.9g:%.9g:%.9g", s.epoch_unix_ns, s.first_s,
                s.window_s, s.every_s);
  return text;
}

std::optional<TraceSchedule> parse_schedule(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t at = 0;;) {
    const std::size_t colon = text.find(':', at);
    parts.push_back(text.substr(at, colon == std::string_view::npos ? colon : colon - at));
    if (colon == std::string_view::npos) break;
    at = colon + 1;
  }
  TraceSchedule s;
  if (parts.size() != 4 || !parse_number(parts[0], s.epoch_unix_ns) ||
      !parse_number(parts[1], s.first_s) || !parse_number(parts[2], s.window_s) ||
      !parse_number(parts[3], s.every_s)) {
    return std::nullopt;
  }
  if (!std::isfinite(s.first_s) || !std::isfinite(s.window_s) || !std::isfinite(s.every_s) ||
      s.first_s < 0 || s.every_s < 0 || s.window_s <= 0) {
    return std::nullopt;
  }
  if (!s.whole_job() && s.window_s >= s.every_s) return std::nullopt;
  return s;
}

Window window_at_or_after(const TraceSchedule& s, std::int64_t now_unix_ns) {
  const std::int64_t first = s.epoch_unix_ns + to_ns(s.first_s);
  const std::int64_t length = to_ns(s.window_s);
  if (s.whole_job()) return {first, INT64_MAX};
  const std::int64_t period = to_ns(s.every_s);
  if (now_unix_ns < first) return {first, first + length};
  const std::int64_t k = (now_unix_ns - first) / period;
  const std::int64_t start = first + k * period;
  if (now_unix_ns < start + length) return {start, start + length};
  return {start + period, start + period + length};
}

TraceSchedule node_schedule() {
  TraceSchedule s;
  s.epoch_unix_ns = 0;
  s.first_s = 10;
  s.window_s = 2;
  s.every_s = 20;
  return s;
}

}  // namespace gpulens::inject

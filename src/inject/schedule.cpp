// SPDX-License-Identifier: Apache-2.0
#include "inject/schedule.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
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

// Spread: the moment the first window opens.
std::int64_t anchor_ns(const TraceSchedule& s) {
  const std::int64_t earliest = s.epoch_unix_ns + to_ns(s.first_s);
  return std::max(earliest, s.origin_unix_ns);
}

// Spread: the window of the slot [start, start + length), or of the steady slot
// `steady` (0, 1, ... after the ramp; -1 for a ramp slot, whose window opens
// with it). A steady slot's window lies at frac((steady + 1) / phi) of the room
// the slot leaves: no two periods alike, so a job that alternates in step with
// the period is seen in each of its phases.
Window slot_window(std::int64_t start, std::int64_t length, std::int64_t window,
                   std::int64_t steady) {
  if (steady < 0) return {start, start + window};
  constexpr double kInversePhi = 0.6180339887498949;
  const double turn = static_cast<double>(steady + 1) * kInversePhi;
  const double room = static_cast<double>(length - window);
  const auto offset = static_cast<std::int64_t>((turn - std::floor(turn)) * room);
  return {start + offset, start + offset + window};
}

Window spread_window_at_or_after(const TraceSchedule& s, std::int64_t now) {
  const std::int64_t window = to_ns(s.window_s);
  const std::int64_t period = to_ns(s.every_s);
  std::int64_t start = anchor_ns(s);
  // The ramp: slots growing by kSlotGrowth from ramp_s until one would reach the
  // period; the first slot, whose window opens at the anchor, always.
  for (double length_s = s.ramp_s; length_s < s.every_s || start == anchor_ns(s);
       length_s *= kSlotGrowth) {
    const std::int64_t length = to_ns(std::min(length_s, s.every_s));
    const Window w = slot_window(start, length, window, -1);
    if (now < w.end_ns) return w;
    start += length;
  }
  // Then one slot per period.
  const std::int64_t j = now < start ? 0 : (now - start) / period;
  const Window w = slot_window(start + j * period, period, window, j);
  if (now < w.end_ns) return w;
  return slot_window(start + (j + 1) * period, period, window, j + 1);
}

}  // namespace

TraceSchedule spread_schedule(std::int64_t epoch_unix_ns, double window_s, double every_s) {
  TraceSchedule s;
  s.epoch_unix_ns = epoch_unix_ns;
  s.first_s = 0;
  s.window_s = window_s;
  s.every_s = every_s;
  s.ramp_s = std::min(2 * window_s, every_s);
  return s;
}

std::string format_schedule(const TraceSchedule& s) {
  // No fmt here: the injection library links nothing it does not need.
  char text[160];
  if (s.spread()) {
    std::snprintf(text, sizeof text, "%" PRId64 ":%.9g:%.9g:%.9g:%.9g", s.epoch_unix_ns, s.first_s,
                  s.window_s, s.every_s, s.ramp_s);
  } else {
    std::snprintf(text, sizeof text, "%" PRId64 ":%.9g:%.9g:%.9g", s.epoch_unix_ns, s.first_s,
                  s.window_s, s.every_s);
  }
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
  if ((parts.size() != 4 && parts.size() != 5) || !parse_number(parts[0], s.epoch_unix_ns) ||
      !parse_number(parts[1], s.first_s) || !parse_number(parts[2], s.window_s) ||
      !parse_number(parts[3], s.every_s) ||
      (parts.size() == 5 && !parse_number(parts[4], s.ramp_s))) {
    return std::nullopt;
  }
  if (!std::isfinite(s.first_s) || !std::isfinite(s.window_s) || !std::isfinite(s.every_s) ||
      !std::isfinite(s.ramp_s) || s.first_s < 0 || s.every_s < 0 || s.window_s <= 0 ||
      s.ramp_s < 0) {
    return std::nullopt;
  }
  if (!s.whole_job() && s.window_s >= s.every_s) return std::nullopt;
  // A slot must hold its window; "0" in the fifth field is the fixed layout.
  if (s.spread() && s.ramp_s <= s.window_s) return std::nullopt;
  return s;
}

Window window_at_or_after(const TraceSchedule& s, std::int64_t now_unix_ns) {
  if (s.spread() && !s.whole_job()) return spread_window_at_or_after(s, now_unix_ns);
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

// The first process to start CUDA puts its time in the records directory (a file
// linked into place whole, so no process reads a half-written one); the others
// read it.
std::int64_t job_origin_ns(const std::string& dir, std::int64_t now) {
  const std::string path = dir + "/" + kOriginFile;
  const std::string mine = path + "." + std::to_string(::getpid());
  const std::string text = std::to_string(now);
  if (const int fd = ::open(mine.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); fd >= 0) {
    const bool whole = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    const bool linked = whole && ::link(mine.c_str(), path.c_str()) == 0;
    ::unlink(mine.c_str());
    if (linked) return now;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return now;
  char buf[32] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return now;
  char* end = nullptr;
  errno = 0;
  const long long origin = std::strtoll(buf, &end, 10);
  // Written by a process of this job, so not after this one's start.
  if (errno != 0 || end == buf || origin <= 0 || origin > now) return now;
  return origin;
}

}  // namespace gpulens::inject

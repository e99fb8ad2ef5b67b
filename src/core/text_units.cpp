// SPDX-License-Identifier: Apache-2.0
#include "core/text_units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace gpulens {
namespace {

constexpr const char* kNotAvailable = "n/a";

// `value` as printed with `decimals` (fmt's rounding), read back: units are chosen
// on it, so that the choice and the digits agree (59.96 s is "1m 00s", not "60.0 s").
double as_printed(double value, int decimals) {
  return std::stod(fmt::format("{:.{}f}", value, decimals));
}

std::string percent(double value, int decimals) {
  if (!std::isfinite(value)) return kNotAvailable;
  if (decimals == kSmallKept) decimals = value > 0 && value < 1 ? 2 : 0;
  decimals = std::max(decimals, 0);
  // A tiny negative (a rounding error upstream) reads "0 %", never "-0 %".
  if (as_printed(value, decimals) == 0) value = 0;
  return fmt::format("{:.{}f} %", value, decimals);
}

}  // namespace

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds)) return kNotAvailable;
  const double s = std::max(seconds, 0.0);
  if (as_printed(s, 1) < 60) return fmt::format("{:.1f} s", s);
  const long long total = std::llround(s);
  const long long h = total / 3600;
  const long long m = total % 3600 / 60;
  const long long sec = total % 60;
  if (h > 0) return fmt::format("{}h {:02}m {:02}s", h, m, sec);
  return fmt::format("{}m {:02}s", m, sec);
}

std::string duration_compact(double seconds) {
  if (!std::isfinite(seconds)) return kNotAvailable;
  const long long s = std::llround(std::max(seconds, 0.0));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string share_text(double ratio, int decimals) {
  return percent(ratio * 100, decimals);
}

std::string share_text(std::optional<double> ratio, int decimals) {
  return ratio ? share_text(*ratio, decimals) : kNotAvailable;
}

std::string points_text(double points, int decimals) {
  return percent(points, decimals);
}

std::string points_text(std::optional<double> points, int decimals) {
  return points ? points_text(*points, decimals) : kNotAvailable;
}

std::string points_compact(double points) {
  if (!std::isfinite(points)) return kNotAvailable;
  if (points != 0 && std::abs(points) < 9.95) return fmt::format("{:.1f}%", points);
  return fmt::format("{:.0f}%", points);
}

std::string gib_text(double mib, int decimals) {
  if (!std::isfinite(mib)) return kNotAvailable;
  return fmt::format("{:.{}f} GiB", mib / 1024, std::max(decimals, 0));
}

std::string mib_rate_text(double mib_per_s) {
  if (!std::isfinite(mib_per_s)) return kNotAvailable;
  if (std::abs(mib_per_s) >= 10240) return fmt::format("{:.1f} GiB/s", mib_per_s / 1024);
  return fmt::format("{:.0f} MiB/s", mib_per_s);
}

std::string gb_rate_text(double gb_per_s) {
  if (!std::isfinite(gb_per_s)) return kNotAvailable;
  return fmt::format("{:.1f} GB/s", gb_per_s);
}

std::string kernel_time_text(double seconds) {
  if (!std::isfinite(seconds)) return kNotAvailable;
  const double s = std::max(seconds, 0.0);
  if (as_printed(s * 1e9, 0) < 1000) return fmt::format("{:.0f} ns", s * 1e9);
  if (as_printed(s * 1e6, 1) < 1000) return fmt::format("{:.1f} µs", s * 1e6);
  if (as_printed(s * 1e3, 2) < 1000) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

}  // namespace gpulens

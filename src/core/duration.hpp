// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one grammar for durations and points in time that people type: config
// files (diagnosis/config), API query parameters (?from=, ?to=, ?step=), the
// CLI (`gpulens report --from/--to`, `serve --history-raw`). Written down once
// in docs/durations.md; tested from one table (tests/unit/core/duration_test.cpp).
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace gpulens {

// The longest duration and the latest Unix time anything may give (about 317
// years, year 2286): more than any history holds, far from where milliseconds
// overflow 64 bits. Callers may set tighter limits of their own.
inline constexpr double kMaxTimeTextSeconds = 1e10;

// A duration in seconds: "90" (a bare number is seconds), "90s", "250ms", "10m",
// "10min", "1.5h", "7d", "2w", or terms summed: "1h30m", "1h 30m". Plain decimal
// numbers only (no sign, exponent, hex, inf or nan); a space may separate a
// number from its unit and one term from the next, none may lead or trail.
// Never negative, never above kMaxTimeTextSeconds.
Result<double> parse_duration(std::string_view text);

// A point in time as Unix seconds: "now", a duration before now ("-2h",
// "now-1h30m"), Unix seconds ("1795289145.5"), or RFC 3339 / ISO 8601
// ("2026-11-21T10:00:00Z", "2026-11-21T11:00:00+01:00", "2026-11-21 10:00";
// without an offset local time, a date alone its local midnight).
// `now` is the caller's now (a replayed recording's newest sample, say).
Result<double> parse_time(std::string_view text, double now);

// "2026-11-21T10:00:00Z" (whole seconds, UTC): the form parse_time reads back.
std::string format_utc_time(double t);

}  // namespace gpulens

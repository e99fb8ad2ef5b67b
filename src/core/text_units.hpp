// SPDX-License-Identifier: Apache-2.0
#pragma once
// Numbers into words, once for every output: durations, shares, sizes, rates and
// kernel-scale times. Each says its unit in the project's one style ("45 %",
// "2m 05s", "3.5 GiB", "12.3 µs"); a figure that cannot be said (NaN, infinity)
// reads "n/a". One table of cases in tests/unit/core/text_units_test.cpp.
//
// Shares come in two scales, kept apart by name so that one cannot be passed
// where the other is meant: share_text() takes a 0..1 ratio, points_text() the
// 0..100 points NVML and GPM report.
#include <optional>
#include <string>

namespace gpulens {

// A duration in prose: "0.4 s", "59.9 s", "1m 00s", "2h 03m 04s". Tenths of a
// second below a minute, whole seconds above; negatives read as 0.
std::string duration_text(double seconds);

// A duration in whole seconds without spaces: "45s", "2m10s", "3h05m". For
// `gpulens top` only: its screen is redrawn every tick, and its title and state
// tail must stay short and steady while they do ("for 10s", "last 1m40s"), which
// tenths of a second would not.
std::string duration_compact(double seconds);

// Decimals of a share: a fixed count, or kSmallKept: two below 1 % and none from
// there, so that 1 busy SM of 132 reads "0.76 %", not "1 %" (and 0 reads "0 %").
inline constexpr int kSmallKept = -1;

// A 0..1 share in percent: share_text(0.45) is "45 %", share_text(0.123, 1) "12.3 %".
std::string share_text(double ratio, int decimals = 0);
// Absent reads "n/a".
std::string share_text(std::optional<double> ratio, int decimals = 0);

// Points (0..100) in percent: points_text(45) is "45 %".
std::string points_text(double points, int decimals = 0);
// Absent reads "n/a".
std::string points_text(std::optional<double> points, int decimals = 0);

// Points in top's fixed-width columns: "98%", "0.7%" (a tenth below 9.95, so the
// column keeps four characters and a near-idle GPU does not read 0 or 1).
std::string points_compact(double points);

// MiB as GiB: gib_text(3584) is "3.5 GiB".
std::string gib_text(double mib, int decimals = 1);

// A rate in MiB/s: "14 MiB/s", or from 10 GiB/s on "12.5 GiB/s".
std::string mib_rate_text(double mib_per_s);
// A rate in decimal GB/s, the unit PCIe and copy speeds are quoted in: "12.3 GB/s".
std::string gb_rate_text(double gb_per_s);

// A kernel-scale time: "350 ns", "12.3 µs", "1.25 ms", "2.00 s". The unit is
// chosen after rounding, so 999.96 µs reads "1.00 ms", never "1000.0 µs". Every
// output is UTF-8 (the text forms draw block bars too), so µs is spelt so.
std::string kernel_time_text(double seconds);

}  // namespace gpulens

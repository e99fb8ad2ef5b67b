// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one rounding policy of gpulens' JSON outputs (the diagnosis report, the
// verdict, the API, trace lines): each kind of number has a named precision,
// so that goldens do not flap in the last bit and two outputs of the same
// value agree. A value that is not finite is null in JSON, never NaN.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace gpulens {

namespace decimals {
inline constexpr int kTime = 3;     // Unix times and durations in seconds: milliseconds
inline constexpr int kReading = 3;  // a counter's reading or mean (%, MiB, W, MHz)
inline constexpr int kRatio = 4;    // shares and ratios 0..1 (0.01 %), evidence values
inline constexpr int kFine = 6;     // hours, money, energy in kWh
inline constexpr int kScore = 2;    // efficiency and confidence
inline constexpr int kRate = 2;     // bandwidths in GB/s, percentages of a peak
inline constexpr int kPower = 1;    // watts of a mean power
inline constexpr int kWhole = 0;    // MiB and MHz limits
}  // namespace decimals

// `x` rounded half away from zero to `places` decimals.
double round_to(double x, int places);

// `x` rounded to `places` as JSON; null when absent or not finite.
nlohmann::ordered_json json_number(double x, int places);
nlohmann::ordered_json json_number(const std::optional<double>& x, int places);

// Appends a finite number in its shortest exact form: integers without a
// fraction ("3", not "3.0"), others as the shortest text that reads back the
// same double ("0.25", "1.2e+10"). Both the trace lines and Prometheus write
// numbers through it.
void append_shortest(std::string& out, double finite_value);

}  // namespace gpulens

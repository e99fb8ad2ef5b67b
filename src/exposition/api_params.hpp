#pragma once
// Strict parsers for the query parameters of /api/v1/ (untrusted input: a
// value that does not parse is a 400, never a guess).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.hpp"

namespace gpulens::server {

// The largest duration or Unix time a parameter may give (year 2286): anything
// the history can hold, and far from where milliseconds overflow 64 bits.
inline constexpr double kMaxParamSeconds = 1e10;

// "90", "90s", "250ms", "15m", "6h", "7d", "2w": seconds, finite, 0 to kMaxParamSeconds.
std::optional<double> parse_duration_param(std::string_view text);

// A point in time: Unix seconds ("1732200000.5"), "now", or a duration before
// `now` ("-15m", "now-15m"). `now` is the newest sample's time, so that a
// replayed recording answers "the last hour" with its own last hour.
std::optional<double> parse_time_param(std::string_view text, double now);

// "0,1,3": GPU indexes (0..1023).
std::optional<std::vector<int>> parse_gpu_list(std::string_view text);

// "sm_active,gpu_util": trace metric keys; `bad` names the first unknown one.
std::optional<std::vector<Metric>> parse_metric_list(std::string_view text, std::string& bad);

}  // namespace gpulens::server

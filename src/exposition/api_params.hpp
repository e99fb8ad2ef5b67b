// SPDX-License-Identifier: Apache-2.0
#pragma once
// Strict parsers for the query parameters of /api/v1/ (untrusted input: a
// value that does not parse is a 400, never a guess).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.hpp"

namespace gpulens::exposition {

// Durations and times (?from=, ?to=, ?step=) are core/duration.hpp's.

// "0,1,3": GPU indexes (0..1023).
std::optional<std::vector<int>> parse_gpu_list(std::string_view text);

// "sm_active,gpu_util": trace metric keys; `bad` names the first unknown one.
std::optional<std::vector<Metric>> parse_metric_list(std::string_view text, std::string& bad);

}  // namespace gpulens::exposition

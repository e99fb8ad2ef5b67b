// SPDX-License-Identifier: Apache-2.0
#pragma once
// Findings in words: one sentence that says what the GPU is doing, and short,
// concrete fixes that use what was seen (SM counts, process names, the price).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnosis/classifier.hpp"
#include "diagnosis/fix_context.hpp"
#include "diagnosis/hardware.hpp"
#include "diagnosis/window.hpp"

namespace gpulens::diagnosis {

// Appends the fixes not already in `out` (two findings or alerts may share one).
inline void append_unique(std::vector<std::string>& out, const std::vector<std::string>& more) {
  for (const auto& f : more) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
}

// "A kernel runs 100 % of the time but only about 1 of 132 SMs is busy."
std::string describe_state(const StateFinding& finding, const HardwareLimits& hw);
// "power cap (software): SM clock 1365 of 1980 MHz, 697 of 700 W".
std::string describe_throttle(const ThrottleFinding& throttle);

std::vector<std::string> fixes_for_state(const StateFinding& finding, const WindowStats& window,
                                         const HardwareLimits& hw, const FixContext& ctx);
std::vector<std::string> fixes_for_throttle(const ThrottleFinding& throttle);

// Fixes for a built-in alert rule id (custom rules have none).
std::vector<std::string> fixes_for_alert(std::string_view rule, const StateFinding& finding,
                                         const WindowStats& window, const HardwareLimits& hw,
                                         const FixContext& ctx);

// The fix for copies staged by the host (StateFacts::copies_host_limited):
// pinned memory and non-blocking copies.
std::string host_limited_copies_fix(const StateFacts& facts, const WindowStats& window);

// "about $2.49 per hour" or "" when no price is known.
std::string cost_per_hour_text(const FixContext& ctx);

}  // namespace gpulens::diagnosis

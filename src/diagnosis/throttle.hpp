// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether one GPU's clocks were held down by power or heat over its window.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/hardware.hpp"
#include "diagnosis/state.hpp"
#include "diagnosis/thresholds.hpp"
#include "diagnosis/window.hpp"

namespace gpulens::diagnosis {

struct ThrottleFinding {
  bool throttled = false;
  std::uint64_t reasons = 0;  // power/thermal clock reasons seen in the window
  double share = 0;           // share of samples that carried one
  std::string cause;          // "power cap (software)"; empty when not throttled
  std::optional<double> sm_clock_mhz;
  std::optional<double> max_sm_clock_mhz;
  std::optional<double> power_w;
  std::optional<double> power_limit_w;
  std::optional<double> temp_c;
  std::vector<Evidence> evidence;
};

// Throttled: a power/thermal clock reason in most of the window and, where the
// clocks are known, the SM clock below its maximum.
ThrottleFinding detect_throttle(const WindowStats& window, const HardwareLimits& hw,
                                const Thresholds& th);

}  // namespace gpulens::diagnosis

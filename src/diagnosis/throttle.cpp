// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/throttle.hpp"

#include <fmt/format.h>

#include "core/clock_reasons.hpp"

namespace gpulens::diagnosis {

ThrottleFinding detect_throttle(const WindowStats& window, const HardwareLimits& hw,
                                const Thresholds& th) {
  ThrottleFinding t;
  t.share = window.throttle_share;
  t.reasons = window.throttle_reasons;
  t.sm_clock_mhz = window.get(Metric::SmClockMhz);
  t.max_sm_clock_mhz = hw.max_sm_clock_mhz;
  t.power_w = window.get(Metric::PowerW);
  t.power_limit_w = hw.power_limit_w;
  t.temp_c = window.get(Metric::TempC);
  if (!window.mean.has(Metric::ClockEventReasons) || t.share < th.throttle_share_min) return t;
  bool clocks_low = true;
  if (t.sm_clock_mhz && t.max_sm_clock_mhz && *t.max_sm_clock_mhz > 0) {
    const double share = *t.sm_clock_mhz / *t.max_sm_clock_mhz;
    clocks_low = share < th.throttle_clock_share_max;
    t.evidence.push_back(
        ev("sm_clock_share", share, "<", th.throttle_clock_share_max, "ratio",
           fmt::format("{:.0f} of {:.0f} MHz", *t.sm_clock_mhz, *t.max_sm_clock_mhz)));
  }
  if (!clocks_low) return t;
  t.throttled = true;
  t.cause = clock_reasons_text(t.reasons);
  t.evidence.insert(t.evidence.begin(), ev("throttle_reason_share", t.share,
                                           ">=", th.throttle_share_min, "ratio", t.cause));
  if (t.power_w && t.power_limit_w) {
    t.evidence.push_back(ev("power_w", t.power_w, {}, t.power_limit_w, "W", "limit"));
  }
  return t;
}

}  // namespace gpulens::diagnosis

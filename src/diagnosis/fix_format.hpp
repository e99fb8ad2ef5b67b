// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small formatting helpers shared by the summaries and fixes (fix_texts.hpp).
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/text_units.hpp"
#include "diagnosis/classifier.hpp"
#include "diagnosis/hardware.hpp"

namespace gpulens::diagnosis::fmt_fix {

// Readings are points (0..100); below 1 % two decimals, so 1 busy SM of 132 reads 0.76 %.
inline std::string pct(std::optional<double> points) {
  return points_text(points, kSmallKept);
}

inline std::string gbytes_s(double mibs) {
  return gb_rate_text(mibs / kMibPerGb);
}

inline std::string sms_busy(const StateFacts& f, const HardwareLimits& hw) {
  if (!f.busy_sms || !hw.sm_count) return {};
  return fmt::format("about {:.0f} of {} SMs", *f.busy_sms, *hw.sm_count);
}

inline std::string process_label(const std::string& name, std::uint32_t pid) {
  if (name.empty()) return pid ? fmt::format("pid {}", pid) : "a process";
  return pid ? fmt::format("{} (pid {})", name, pid) : name;
}

}  // namespace gpulens::diagnosis::fmt_fix

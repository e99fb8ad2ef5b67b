// SPDX-License-Identifier: Apache-2.0
#include "core/clock_reasons.hpp"

#include <array>

namespace gpulens {
namespace {

// Most severe first: hardware protection beats software caps beats benign states.
constexpr std::array<ClockReason, 9> kReasons{{
    {clock_reason::kHwPowerBrake, "hw_power_brake", "power brake (hardware)", "brake"},
    {clock_reason::kHwThermal, "hw_thermal", "thermal slowdown (hardware)", "hwthrm"},
    {clock_reason::kHwSlowdown, "hw_slowdown", "slowdown (hardware)", "hwslow"},
    {clock_reason::kSwThermal, "sw_thermal", "thermal slowdown (software)", "thrm"},
    {clock_reason::kSwPowerCap, "sw_power_cap", "power cap (software)", "pwr"},
    {clock_reason::kSyncBoost, "sync_boost", "sync boost", "sync"},
    {clock_reason::kAppClocks, "applications_clocks", "application clocks setting", "app"},
    {clock_reason::kDisplayClocks, "display_clocks", "display clock setting", "disp"},
    {clock_reason::kGpuIdle, "gpu_idle", "idle", "idle"},
}};

}  // namespace

std::vector<ClockReason> decode_clock_reasons(std::uint64_t mask) {
  std::vector<ClockReason> out;
  std::uint64_t known = 0;
  for (const auto& r : kReasons) {
    known |= r.bit;
    if ((mask & r.bit) != 0) out.push_back(r);
  }
  if ((mask & ~known) != 0) out.push_back({mask & ~known, "unknown", "unknown reason", "?"});
  return out;
}

std::string clock_reasons_text(std::uint64_t mask) {
  const auto reasons = decode_clock_reasons(mask);
  if (reasons.empty()) return "none";
  std::string text;
  for (const auto& r : reasons) {
    if (!text.empty()) text += ", ";
    text += r.words;
  }
  return text;
}

std::string clock_reason_short(std::uint64_t mask) {
  const auto reasons = decode_clock_reasons(mask);
  return reasons.empty() ? std::string() : std::string(reasons.front().short_label);
}

}  // namespace gpulens

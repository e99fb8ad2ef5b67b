// SPDX-License-Identifier: Apache-2.0
#pragma once
// NVML clock event ("throttle") reasons, decoded into words.
#include <cstdint>
#include <string>
#include <vector>

namespace gpulens {

namespace clock_reason {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kAppClocks = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermal = 0x20;
inline constexpr std::uint64_t kHwThermal = 0x40;
inline constexpr std::uint64_t kHwPowerBrake = 0x80;
inline constexpr std::uint64_t kDisplayClocks = 0x100;
// Reasons that mean the GPU runs slower than it could for power or heat.
inline constexpr std::uint64_t kThrottling =
    kSwPowerCap | kHwSlowdown | kSwThermal | kHwThermal | kHwPowerBrake;
}  // namespace clock_reason

struct ClockReason {
  std::uint64_t bit;
  const char* id;           // stable id: "sw_power_cap"
  const char* words;        // "power cap (software)"
  const char* short_label;  // for narrow tables: "pwr"
};

// The reasons set in `mask`, most severe first; unknown bits are listed as "0x...".
std::vector<ClockReason> decode_clock_reasons(std::uint64_t mask);
// "power cap (software), thermal (hardware)" or "none".
std::string clock_reasons_text(std::uint64_t mask);
// The single most important short label ("pwr", "thrm", "hw", "brake", "idle"), or "".
std::string clock_reason_short(std::uint64_t mask);

}  // namespace gpulens

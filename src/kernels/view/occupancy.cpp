// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/occupancy.hpp"

#include <algorithm>

namespace gpulens::kernels {

std::optional<SmLimits> limits_for_architecture(const std::string& a, std::uint32_t sms) {
  // Per-SM limits from the CUDA C Programming Guide's compute capability table.
  SmLimits l;
  l.sms = sms;
  l.registers = 65536;
  if (a == "Hopper" || a == "Blackwell") {
    l.max_blocks = 32, l.max_warps = 64, l.shared_bytes = 233472;
  } else if (a == "Ampere") {  // A100 (sm_80); sm_86 parts have less, see below
    l.max_blocks = 32, l.max_warps = 64, l.shared_bytes = 167936;
  } else if (a == "Ada") {
    l.max_blocks = 24, l.max_warps = 48, l.shared_bytes = 102400;
  } else if (a == "Volta") {
    l.max_blocks = 32, l.max_warps = 64, l.shared_bytes = 98304, l.reserved_shared_per_block = 0;
  } else if (a == "Turing") {
    l.max_blocks = 16, l.max_warps = 32, l.shared_bytes = 65536, l.reserved_shared_per_block = 0;
  } else {
    return std::nullopt;
  }
  return l;
}

Occupancy occupancy(const LaunchShape& s, const SmLimits& l) {
  Occupancy o;
  // In 64 bits: a record may carry any 32-bit value, and in 32 bits the register
  // and shared-memory sums below wrap to 0 (a division by zero) for large ones.
  const std::uint64_t warps = std::max<std::uint64_t>(1, (std::uint64_t{s.threads} + 31) / 32);
  std::uint64_t best = l.max_blocks > 0 ? l.max_blocks : 32;
  o.limited_by = "blocks";
  auto limit = [&](std::uint64_t n, const char* why) {
    if (n < best) {
      best = n;
      o.limited_by = why;
    }
  };
  if (l.max_warps > 0) limit(l.max_warps / warps, "warps");
  if (s.registers > 0 && l.registers > 0) {
    // Registers are given to warps in units of 256 (8 per thread).
    const std::uint64_t per_warp = ((std::uint64_t{s.registers} * 32 + 255) / 256) * 256;
    const std::uint64_t warps_fit = l.registers / per_warp;
    limit(warps_fit / warps, "registers");
  }
  if (s.shared_bytes > 0 && l.shared_bytes > 0) {
    limit(l.shared_bytes / (std::uint64_t{s.shared_bytes} + l.reserved_shared_per_block),
          "shared memory");
  }
  o.blocks_per_sm = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, best));  // it ran
  if (l.sms > 0) {
    o.sms_used = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.blocks, l.sms));
    o.waves = static_cast<double>(s.blocks) / (static_cast<double>(l.sms) * o.blocks_per_sm);
  }
  return o;
}

}  // namespace gpulens::kernels

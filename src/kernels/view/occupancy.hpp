// SPDX-License-Identifier: Apache-2.0
#pragma once
// How many blocks of a kernel fit on one SM at once, from the launch
// configuration and the SM's limits (the arithmetic of CUDA's occupancy
// calculator), and from that how many SMs a launch keeps busy.
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/record/launch_shape.hpp"

namespace gpulens::kernels {

// Limits of an architecture by name ("Hopper", "Ampere", ...) for recordings
// that carry no device record; nullopt when the name is unknown.
std::optional<SmLimits> limits_for_architecture(const std::string& architecture, std::uint32_t sms);

struct Occupancy {
  std::uint32_t blocks_per_sm = 0;  // resident at once (at least 1 for a kernel that ran)
  std::uint32_t sms_used = 0;       // SMs given at least one block: min(blocks, SMs)
  double waves = 0;                 // blocks / (SMs x blocks per SM)
  const char* limited_by = "";      // "warps", "registers", "shared memory", "blocks"
};

Occupancy occupancy(const LaunchShape& shape, const SmLimits& limits);

}  // namespace gpulens::kernels

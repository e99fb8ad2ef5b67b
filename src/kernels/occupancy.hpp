// SPDX-License-Identifier: Apache-2.0
#pragma once
// How many blocks of a kernel fit on one SM at once, from the launch
// configuration and the SM's limits (the arithmetic of CUDA's occupancy
// calculator), and from that how many SMs a launch keeps busy.
#include <cstdint>
#include <optional>
#include <string>

namespace gpulens::kernels {

struct SmLimits {
  std::uint32_t sms = 0;
  std::uint32_t max_blocks = 0;                    // resident blocks per SM
  std::uint32_t max_warps = 0;                     // resident warps per SM
  std::uint32_t registers = 0;                     // 32-bit registers per SM
  std::uint32_t shared_bytes = 0;                  // shared memory per SM usable by blocks
  std::uint32_t reserved_shared_per_block = 1024;  // the driver's own, sm_80 and newer
};

// Limits of an architecture by name ("Hopper", "Ampere", ...) for recordings
// that carry no device record; nullopt when the name is unknown.
std::optional<SmLimits> limits_for_architecture(const std::string& architecture, std::uint32_t sms);

struct LaunchShape {
  std::uint64_t blocks = 0;        // grid x*y*z
  std::uint32_t threads = 0;       // block x*y*z
  std::uint32_t registers = 0;     // per thread
  std::uint32_t shared_bytes = 0;  // static + dynamic per block
};

struct Occupancy {
  std::uint32_t blocks_per_sm = 0;  // resident at once (at least 1 for a kernel that ran)
  std::uint32_t sms_used = 0;       // SMs given at least one block: min(blocks, SMs)
  double waves = 0;                 // blocks / (SMs x blocks per SM)
  const char* limited_by = "";      // "warps", "registers", "shared memory", "blocks"
};

Occupancy occupancy(const LaunchShape& shape, const SmLimits& limits);

}  // namespace gpulens::kernels

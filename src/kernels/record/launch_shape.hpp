// SPDX-License-Identifier: Apache-2.0
#pragma once
// A kernel's launch configuration and an SM's limits as the records carry them
// (legacy_record_read.hpp, chunk_record.hpp's config lines): plain values, read
// here and turned into occupancy by the view (kernels/view/occupancy.hpp).
#include <cstdint>

namespace gpulens::kernels {

struct SmLimits {
  std::uint32_t sms = 0;
  std::uint32_t max_blocks = 0;                    // resident blocks per SM
  std::uint32_t max_warps = 0;                     // resident warps per SM
  std::uint32_t registers = 0;                     // 32-bit registers per SM
  std::uint32_t shared_bytes = 0;                  // shared memory per SM usable by blocks
  std::uint32_t reserved_shared_per_block = 1024;  // the driver's own, sm_80 and newer
};

struct LaunchShape {
  std::uint64_t blocks = 0;        // grid x*y*z
  std::uint32_t threads = 0;       // block x*y*z
  std::uint32_t registers = 0;     // per thread
  std::uint32_t shared_bytes = 0;  // static + dynamic per block
};

}  // namespace gpulens::kernels

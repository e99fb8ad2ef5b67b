// SPDX-License-Identifier: Apache-2.0
#include "cli/generations.hpp"

namespace gpulens::cli {

// GPM (the SM, tensor, pipe, DRAM, PCIe and NVLink counters) exists from Hopper
// on; before it NVML gives only the classic counters, and gpulens reads PCIe and
// NVLink traffic from GPM too. So the line falls between Ada and Hopper, and a
// Hopper or Blackwell GPU whose GPM is denied (some containers) reads like Ada,
// unless DCGM's profiling counters stand in for GPM (docs/dcgm.md).
std::string generation_limits_help() {
  return "What gpulens reads on each GPU generation (docs/generations.md):\n"
         "  Volta (V100), Ampere (A100, A30, A10), Ada (L4, L40S): classic NVML only:\n"
         "    utilization, memory controller busy, memory, power, energy, clocks,\n"
         "    throttle reasons, processes. Cannot tell how well kernels use the SMs\n"
         "    (kernel time reads 'busy'), tensor and FP pipes, DRAM bandwidth, PCIe\n"
         "    and NVLink traffic, a hang (no 'stalled'), a wait on another GPU, or\n"
         "    the MFU estimate. Where a DCGM host engine runs, gpulens reads SM,\n"
         "    tensor, FP-pipe, DRAM, PCIe and NVLink activity from it instead (--dcgm,\n"
         "    docs/dcgm.md; not yet run against real DCGM).\n"
         "  Hopper (H100, H200, GH200), Blackwell (B200, GB200): the classic counters\n"
         "    and GPM (SM activity and occupancy, tensor/FP/integer pipes, DRAM, PCIe,\n"
         "    NVLink): every state. With GPM denied (some containers), as Ada.\n";
}

}  // namespace gpulens::cli

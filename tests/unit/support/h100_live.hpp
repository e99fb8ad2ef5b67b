// SPDX-License-Identifier: Apache-2.0
#pragma once
// An H100 as the agent's snapshot holds it (NVML's device facts and the hardware
// limits), for the tests' fixed snapshot (server_support.hpp) and the /metrics
// benchmark (bench/serve_metrics_bench.cpp). Without GoogleTest: the benchmark is
// built without it.
#include <string>
#include <utility>

#include "agent/snapshot.hpp"

namespace gpulens::testing {

// GPU `index` with `uuid`: an H100 80GB HBM3 (SXM), no sample and no state yet.
inline agent::GpuLive h100_live(int index, std::string uuid) {
  agent::GpuLive g;
  g.device.index = index;
  g.device.uuid = std::move(uuid);
  g.device.name = "NVIDIA H100 80GB HBM3";
  g.device.sm_count = 132;
  g.device.mem_total_mib = 81559;
  g.device.power_limit_w = 700;
  g.device.max_sm_clock_mhz = 1980;
  g.device.max_mem_clock_mhz = 2619;
  g.limits.architecture = "Hopper";
  return g;
}

}  // namespace gpulens::testing

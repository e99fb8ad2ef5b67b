// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builders shared by the analysis tests.
#include <cstdint>
#include <optional>
#include <string>

#include "core/sample.hpp"

namespace gpulens::testing {

// A process as the collector reports it (designated initializers would need
// every field under -Wmissing-field-initializers).
inline ProcessSample proc(std::uint32_t pid, std::string name = {},
                          std::optional<double> used_mib = {}, std::optional<double> cpu_pct = {},
                          std::optional<std::uint32_t> ppid = {}, std::string container = {}) {
  ProcessSample p;
  p.pid = pid;
  p.name = std::move(name);
  p.used_mib = used_mib;
  p.cpu_pct = cpu_pct;
  p.ppid = ppid;
  p.container = std::move(container);
  return p;
}

// An H100 SXM as NVML describes it: the device most synthetic windows are on.
inline DeviceInfo h100() {
  DeviceInfo d;
  d.index = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.mem_total_mib = 81559;
  d.power_limit_w = 700;
  d.max_sm_clock_mhz = 1980;
  d.pcie_gen = 5;
  d.pcie_width = 16;
  return d;
}

}  // namespace gpulens::testing

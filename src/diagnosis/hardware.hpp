// SPDX-License-Identifier: Apache-2.0
#pragma once
// Thresholds that come from the hardware, not from fitting recordings: PCIe
// bandwidth from link generation x width, NVLink from link count x per-link rate,
// the practical DRAM ceiling, the SM count.
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"

namespace gpulens::diagnosis {

// What a user may state about hardware the driver does not describe.
struct HardwareSettings {
  // Share of the theoretical DRAM bandwidth that real kernels can reach: HBM
  // copies top out near 90 % of the data-sheet figure (refresh, page switches).
  double dram_practical_peak_pct = 90.0;
  std::optional<double> pcie_mibs;             // per direction; overrides gen x width
  std::optional<int> nvlink_links;             // overrides the header and the model table
  std::optional<double> nvlink_link_gbytes_s;  // per link per direction, GB/s
};

struct HardwareLimits {
  int gpu = 0;
  std::string name;
  std::optional<int> sm_count;
  std::optional<double> pcie_mibs;    // theoretical, per direction
  std::string pcie_basis;             // "PCIe Gen5 x16: 63.0 GB/s per direction"
  std::optional<double> nvlink_mibs;  // theoretical, per direction, all links
  std::optional<int> nvlink_links;
  std::string nvlink_basis;  // "18 NVLink links x 25 GB/s per direction (H100 SXM)"
  double dram_practical_peak_pct = 90.0;
  std::optional<double> power_limit_w;
  std::optional<double> max_sm_clock_mhz;
  std::optional<double> mem_total_mib;
  std::string architecture;  // from the header, or guessed from the name
  // The host's cores (the recording's header): host_cpu_pct read as cores.
  std::optional<int> host_cpu_count;
  // Why SM activity (GPM) may be missing on this device, for "cannot tell" notes.
  std::string gpm_missing_reason;
  std::vector<std::string> notes;  // what is unknown and therefore not judged
};

// GB/s per lane per direction after line coding (Gen1/2 8b/10b, Gen3-5 128b/130b,
// Gen6 FLIT); nullopt for a generation this table does not know.
std::optional<double> pcie_lane_gbytes_s(int generation);

HardwareLimits hardware_limits(const DeviceInfo& device, const HardwareSettings& settings = {});

// Architecture from the marketing name when the header does not say it ("Hopper").
std::string guess_architecture(const std::string& name);

inline constexpr double kMibPerGb = 1e9 / (1024.0 * 1024.0);

}  // namespace gpulens::diagnosis

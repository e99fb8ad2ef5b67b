// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/hardware.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "core/text_units.hpp"

namespace gpulens::diagnosis {
namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// NVLink per model, for headers that do not give the active link count. Only
// SXM/mezzanine parts are listed: PCIe cards (H100 PCIe, H100/H200 NVL) use
// bridges whose link count depends on how they were installed.
struct NvlinkModel {
  std::string_view match;
  std::string_view unless;  // a name with this part is a PCIe card, not the SXM one
  int links;
  double gbytes_per_link;  // per direction
  std::string_view label;
};

constexpr std::array<NvlinkModel, 7> kNvlinkModels{{
    {"GB200", "", 18, 50.0, "GB200 (NVLink 5)"},
    {"B200", "", 18, 50.0, "B200 (NVLink 5)"},
    {"GH200", "", 18, 25.0, "GH200 (NVLink 4)"},
    {"H200", "NVL", 18, 25.0, "H200 SXM (NVLink 4)"},
    {"H100", "PCIe", 18, 25.0, "H100 SXM (NVLink 4)"},
    {"A100-SXM", "", 12, 25.0, "A100 SXM (NVLink 3)"},
    {"V100-SXM", "", 6, 25.0, "V100 SXM (NVLink 2)"},
}};

const NvlinkModel* nvlink_model(std::string_view name) {
  for (const auto& m : kNvlinkModels) {
    if (!contains(name, m.match)) continue;
    if (!m.unless.empty() && contains(name, m.unless)) continue;
    if (m.match == "H100" && contains(name, "NVL")) continue;
    return &m;
  }
  return nullptr;
}

// Per-link rate by architecture, for headers that give a link count but no model.
std::optional<double> nvlink_rate_for(std::string_view arch) {
  if (arch == "Blackwell") return 50.0;
  if (arch == "Hopper" || arch == "Ampere" || arch == "Volta") return 25.0;
  return std::nullopt;
}

}  // namespace

std::optional<double> pcie_lane_gbytes_s(int generation) {
  switch (generation) {
    case 1:
      return 0.25;  // 2.5 GT/s, 8b/10b
    case 2:
      return 0.5;  // 5 GT/s, 8b/10b
    case 3:
      return 0.98462;  // 8 GT/s, 128b/130b
    case 4:
      return 1.96923;  // 16 GT/s, 128b/130b
    case 5:
      return 3.93846;  // 32 GT/s, 128b/130b
    case 6:
      return 7.5625;  // 64 GT/s PAM4, 242/256 FLIT payload
    default:
      return std::nullopt;
  }
}

std::string guess_architecture(const std::string& name) {
  if (contains(name, "B200") || contains(name, "B100") || contains(name, "GB200") ||
      contains(name, "RTX PRO 6000"))
    return "Blackwell";
  if (contains(name, "H100") || contains(name, "H200") || contains(name, "H800") ||
      contains(name, "H20"))
    return "Hopper";
  if (contains(name, "L40") || contains(name, "L4") || contains(name, "RTX 40") ||
      contains(name, "RTX 6000 Ada"))
    return "Ada";
  if (contains(name, "A100") || contains(name, "A10") || contains(name, "A30") ||
      contains(name, "A40") || contains(name, "A800") || contains(name, "RTX 30"))
    return "Ampere";
  if (contains(name, "T4")) return "Turing";
  if (contains(name, "V100")) return "Volta";
  return {};
}

HardwareLimits hardware_limits(const DeviceInfo& device, const HardwareSettings& settings) {
  HardwareLimits hw;
  hw.gpu = device.index;
  hw.name = device.name;
  hw.sm_count = device.sm_count;
  hw.power_limit_w = device.power_limit_w;
  hw.max_sm_clock_mhz = device.max_sm_clock_mhz;
  hw.mem_total_mib = device.mem_total_mib;
  hw.dram_practical_peak_pct = settings.dram_practical_peak_pct;
  hw.architecture =
      device.architecture.empty() ? guess_architecture(device.name) : device.architecture;

  if (settings.pcie_mibs) {
    hw.pcie_mibs = *settings.pcie_mibs;
    hw.pcie_basis = gb_rate_text(*settings.pcie_mibs / kMibPerGb) + " per direction (configured)";
  } else if (device.pcie_gen && device.pcie_width) {
    if (const auto lane = pcie_lane_gbytes_s(*device.pcie_gen)) {
      const double gbytes = *lane * *device.pcie_width;
      hw.pcie_mibs = gbytes * kMibPerGb;
      hw.pcie_basis = fmt::format("PCIe Gen{} x{}: {} per direction", *device.pcie_gen,
                                  *device.pcie_width, gb_rate_text(gbytes));
    } else {
      hw.notes.push_back(fmt::format("PCIe generation {} unknown to gpulens: PCIe load not judged",
                                     *device.pcie_gen));
    }
  } else {
    hw.notes.push_back("PCIe link generation/width not in the header: PCIe load not judged");
  }

  const NvlinkModel* model = nvlink_model(device.name);
  std::optional<int> links = settings.nvlink_links;
  std::string links_from = "configured";
  if (!links && device.nvlink_count) {
    links = device.nvlink_count;
    links_from = "active";
  }
  if (!links && model) {
    links = model->links;
    links_from = std::string(model->label);
  }
  std::optional<double> rate = settings.nvlink_link_gbytes_s;
  if (!rate && model) rate = model->gbytes_per_link;
  if (!rate) rate = nvlink_rate_for(hw.architecture);
  if (links && *links == 0) {
    hw.nvlink_links = 0;
    hw.notes.push_back("no active NVLink links");
  } else if (links && rate) {
    hw.nvlink_links = links;
    hw.nvlink_mibs = *links * *rate * kMibPerGb;
    hw.nvlink_basis =
        fmt::format("{} NVLink links ({}) x {:.0f} GB/s per direction", *links, links_from, *rate);
  } else {
    hw.notes.push_back(
        "NVLink link count or rate unknown: NVLink load judged only against the PCIe link");
  }

  const bool from_dcgm = device.extra.is_object() && device.extra.contains("x_prof_source") &&
                         device.extra["x_prof_source"] == "dcgm";
  if (const auto* why = device.unsupported_reason(Metric::SmActive)) {
    hw.gpm_missing_reason = *why;
  } else if (from_dcgm) {
    // DCGM stood in for GPM at the start (docs/dcgm.md): a gap is DCGM's, not the GPU's.
    hw.gpm_missing_reason =
        "DCGM gave SM activity at the start but not at this time: its host engine went away "
        "or refused (gpulens serve's /api/v1/health, source.profiler, says why)";
  } else if (!hw.architecture.empty() && hw.architecture != "Hopper" &&
             hw.architecture != "Blackwell") {
    hw.gpm_missing_reason = "GPM needs Hopper or newer (this GPU is " + hw.architecture + ")";
  } else if (!hw.architecture.empty()) {
    // A Hopper or Blackwell GPU has GPM: the recording lacks it because NVML
    // denied it (some containers) or the recorder did not read it (--no-gpm).
    hw.gpm_missing_reason = "this " + hw.architecture +
                            " GPU has GPM, but it was not recorded: denied to the container, or "
                            "not read";
  } else {
    hw.gpm_missing_reason = "GPM needs Hopper or newer";
  }
  if (!hw.sm_count) hw.notes.push_back("SM count unknown: cannot say how many SMs are busy");
  if (!hw.mem_total_mib)
    hw.notes.push_back("device memory size unknown: cannot judge memory held or forecast OOM");
  return hw;
}

}  // namespace gpulens::diagnosis

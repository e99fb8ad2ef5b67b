// SPDX-License-Identifier: Apache-2.0
// Static device facts, read once at open: identity, SM count, limits, links, MIG mode.
#include <cstring>
#include <string>

#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources::nvml_detail {
namespace {

using nvml::Return;

std::string read_string(Return (*fn)(nvml::Device, char*, unsigned), nvml::Device dev,
                        unsigned size, DeviceSlot& slot) {
  if (fn == nullptr) return {};
  std::string buffer(size, '\0');
  if (!slot.ok(fn(dev, buffer.data(), size))) return {};
  buffer.resize(std::strlen(buffer.c_str()));
  return buffer;
}

// SM count: nvmlDeviceGetAttributes_v2 gives it directly where the driver allows it
// on a whole GPU; otherwise CUDA cores divided by the FP32 cores per SM of the compute
// capability (for example 16896 / 128 = 132 on an H100 SXM).
void probe_sm_count(const NvmlApi& api, DeviceSlot& slot) {
  DeviceInfo& info = slot.info;
  if (api.deviceGetAttributes_v2 != nullptr) {
    nvml::DeviceAttributes attributes{};
    if (slot.ok(api.deviceGetAttributes_v2(slot.handle, &attributes)) &&
        attributes.multiprocessorCount > 0) {
      info.sm_count = static_cast<int>(attributes.multiprocessorCount);
      info.extra["x_sm_count_source"] = "nvmlDeviceGetAttributes_v2";
      return;
    }
  }
  int major = 0;
  int minor = 0;
  if (api.deviceGetCudaComputeCapability == nullptr ||
      !slot.ok(api.deviceGetCudaComputeCapability(slot.handle, &major, &minor))) {
    return;
  }
  info.extra["x_compute_capability"] = std::to_string(major) + "." + std::to_string(minor);
  unsigned cores = 0;
  const int per_sm = fp32_cores_per_sm(major, minor);
  if (per_sm == 0 || api.deviceGetNumGpuCores == nullptr ||
      !slot.ok(api.deviceGetNumGpuCores(slot.handle, &cores)) || cores == 0) {
    return;
  }
  info.sm_count = static_cast<int>(cores) / per_sm;
  info.extra["x_sm_count_source"] =
      "nvmlDeviceGetNumGpuCores / " + std::to_string(per_sm) + " FP32 cores per SM";
}

std::optional<double> read_max_clock(const NvmlApi& api, DeviceSlot& slot, int type) {
  unsigned mhz = 0;
  if (api.deviceGetMaxClockInfo == nullptr ||
      !slot.ok(api.deviceGetMaxClockInfo(slot.handle, type, &mhz)) || mhz == 0) {
    return std::nullopt;
  }
  return mhz;
}

// Active NVLink links. A board without NVLink answers NOT_SUPPORTED for link 0 (zero
// links); a link number past the device's last answers INVALID_ARGUMENT (stop there).
std::optional<int> count_nvlinks(const NvmlApi& api, DeviceSlot& slot) {
  if (api.deviceGetNvLinkState == nullptr) return std::nullopt;
  int active = 0;
  for (unsigned link = 0; link < nvml::kNvlinkMaxLinks; ++link) {
    int is_active = 0;
    const Return r = api.deviceGetNvLinkState(slot.handle, link, &is_active);
    if (r == Return::NotSupported && link == 0) return 0;
    if (!slot.ok(r)) break;
    if (is_active != 0) {
      ++active;
      slot.nvlinks_active.push_back(link);  // only these links' error counters are read
    }
  }
  return active;
}

}  // namespace

std::string architecture_name(unsigned arch) {
  switch (arch) {
    case nvml::kArchKepler:
      return "Kepler";
    case nvml::kArchMaxwell:
      return "Maxwell";
    case nvml::kArchPascal:
      return "Pascal";
    case nvml::kArchVolta:
      return "Volta";
    case nvml::kArchTuring:
      return "Turing";
    case nvml::kArchAmpere:
      return "Ampere";
    case nvml::kArchAda:
      return "Ada";
    case nvml::kArchHopper:
      return "Hopper";
    case nvml::kArchBlackwell:
      return "Blackwell";
    case nvml::kArchOrin:
      return "Orin";
    default:
      return {};
  }
}

bool hopper_or_newer(unsigned arch) {
  // Orin (T23X) has a larger number than Hopper but is an Ampere-class part.
  if (arch == nvml::kArchOrin || arch == nvml::kArchUnknown) return false;
  return arch >= nvml::kArchHopper;
}

int fp32_cores_per_sm(int major, int minor) {
  switch (major) {
    case 3:
      return 192;  // Kepler
    case 5:
      return 128;  // Maxwell
    case 6:
      return minor == 0 ? 64 : 128;  // GP100 vs GP10x
    case 7:
      return 64;  // Volta, Turing
    case 8:
      return minor == 0 ? 64 : 128;  // GA100 vs GA10x and Ada
    default:
      return major >= 9 ? 128 : 0;  // Hopper, Blackwell
  }
}

// The UUIDs of a MIG-enabled GPU's MIG devices ("MIG-…"): the ids by which a
// device plugin hands MIG slices to pods (docs/kubernetes.md, "Allocation"). Read
// at start: a GPU's MIG layout changes only with nothing running on it.
nlohmann::json mig_device_uuids(const NvmlApi& api, DeviceSlot& slot) {
  nlohmann::json out = nlohmann::json::array();
  unsigned max_devices = 0;
  if (api.deviceGetMaxMigDeviceCount == nullptr || api.deviceGetMigDeviceHandleByIndex == nullptr ||
      !slot.ok(api.deviceGetMaxMigDeviceCount(slot.handle, &max_devices))) {
    return out;
  }
  for (unsigned i = 0; i < max_devices; ++i) {
    nvml::Device mig = nullptr;
    if (!slot.ok(api.deviceGetMigDeviceHandleByIndex(slot.handle, i, &mig))) continue;
    const std::string uuid = read_string(api.deviceGetUUID, mig, nvml::kUuidBufferSize, slot);
    if (!uuid.empty()) out.push_back(uuid);
  }
  return out;
}

void probe_static(const NvmlApi& api, DeviceSlot& slot) {
  DeviceInfo& info = slot.info;
  const nvml::Device dev = slot.handle;
  info.name = read_string(api.deviceGetName, dev, nvml::kNameBufferSize, slot);
  info.uuid = read_string(api.deviceGetUUID, dev, nvml::kUuidBufferSize, slot);

  unsigned arch = nvml::kArchUnknown;
  if (api.deviceGetArchitecture != nullptr && slot.ok(api.deviceGetArchitecture(dev, &arch))) {
    info.architecture = architecture_name(arch);
  }
  slot.arch = arch;
  probe_sm_count(api, slot);

  if (api.deviceGetPciInfo_v3 != nullptr) {
    nvml::PciInfo pci{};
    if (slot.ok(api.deviceGetPciInfo_v3(dev, &pci))) {
      pci.busId[sizeof(pci.busId) - 1] = '\0';
      info.extra["x_pci_bus_id"] = std::string(pci.busId);
    }
  }
  if (api.deviceGetMemoryInfo_v2 != nullptr) {
    nvml::Memory_v2 memory{};
    memory.version = nvml::kMemoryV2Version;
    if (slot.ok(api.deviceGetMemoryInfo_v2(dev, &memory))) {
      info.mem_total_mib = static_cast<double>(memory.total) / (1024.0 * 1024.0);
      // Held by the driver and firmware, never usable: dcgm's FB_RESERVED.
      info.extra["x_fb_reserved_mib"] = static_cast<double>(memory.reserved) / (1024.0 * 1024.0);
    }
  }
  unsigned milliwatts = 0;
  if (api.deviceGetEnforcedPowerLimit != nullptr &&
      slot.ok(api.deviceGetEnforcedPowerLimit(dev, &milliwatts)) && milliwatts > 0) {
    info.power_limit_w = milliwatts / 1000.0;
  }
  info.max_sm_clock_mhz = read_max_clock(api, slot, nvml::kClockSm);
  info.max_mem_clock_mhz = read_max_clock(api, slot, nvml::kClockMem);

  unsigned value = 0;
  if (api.deviceGetMaxPcieLinkGeneration != nullptr &&
      slot.ok(api.deviceGetMaxPcieLinkGeneration(dev, &value)) && value > 0) {
    info.pcie_gen = static_cast<int>(value);
  }
  if (api.deviceGetMaxPcieLinkWidth != nullptr &&
      slot.ok(api.deviceGetMaxPcieLinkWidth(dev, &value)) && value > 0) {
    info.pcie_width = static_cast<int>(value);
  }
  if (api.deviceGetMigMode != nullptr) {
    unsigned current = 0;
    unsigned pending = 0;
    const Return r = api.deviceGetMigMode(dev, &current, &pending);
    if (slot.ok(r)) {
      info.mig_enabled = current == nvml::kMigEnable;
      if (*info.mig_enabled) {
        if (auto uuids = mig_device_uuids(api, slot); !uuids.empty()) {
          info.extra["x_mig_uuids"] = std::move(uuids);
        }
      }
    } else if (r == Return::NotSupported) {
      info.mig_enabled = false;  // a GPU without MIG is never in MIG mode
    }
  }
  info.nvlink_count = count_nvlinks(api, slot);
}

}  // namespace gpulens::sources::nvml_detail

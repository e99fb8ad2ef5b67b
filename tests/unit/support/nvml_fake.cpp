// SPDX-License-Identifier: Apache-2.0
// The fake NVML's entry points: each reads and writes the active FakeNvml's GPUs.
#include "nvml_fake.hpp"

#include <cstring>
#include <type_traits>

namespace gpulens::testing {
namespace {

using namespace fake_detail;

Return list(const std::vector<sources::nvml::ProcessInfo_v3>& from, unsigned* count,
            sources::nvml::ProcessInfo_v3* out) {
  if (*count < from.size()) {
    *count = static_cast<unsigned>(from.size());
    return Return::InsufficientSize;
  }
  // Byte copies at the driver's 24-byte stride, as the real library writes them.
  if (!from.empty()) {
    std::memcpy(static_cast<void*>(out), from.data(),
                from.size() * sizeof(sources::nvml::ProcessInfo_v3));
  }
  *count = static_cast<unsigned>(from.size());
  return Return::Success;
}

void add_system(std::map<std::string, void*>& t) {
  put<&sources::NvmlApi::init_v2>(t, "nvmlInit_v2", []() -> Return {
    enter("nvmlInit_v2");
    return fake().init_ret;
  });
  put<&sources::NvmlApi::shutdown>(t, "nvmlShutdown", []() -> Return {
    ++fake().shutdowns;
    return Return::Success;
  });
  put<&sources::NvmlApi::errorString>(t, "nvmlErrorString", [](Return r) -> const char* {
    return r == Return::NoPermission ? "Insufficient Permissions" : "Fake Error";
  });
  put<&sources::NvmlApi::systemGetDriverVersion>(
      t, "nvmlSystemGetDriverVersion",
      [](char* out, unsigned size) -> Return { return copy_string("580.159.04", out, size); });
  put<&sources::NvmlApi::deviceGetCount_v2>(t, "nvmlDeviceGetCount_v2", [](unsigned* n) -> Return {
    *n = static_cast<unsigned>(fake().gpus.size());
    return Return::Success;
  });
  put<&sources::NvmlApi::deviceGetHandleByIndex_v2>(t, "nvmlDeviceGetHandleByIndex_v2",
                                                    [](unsigned i, Dev* d) -> Return {
                                                      if (i >= fake().gpus.size())
                                                        return Return::InvalidArgument;
                                                      *d = fake().handle(i);
                                                      return Return::Success;
                                                    });
}

void add_static(std::map<std::string, void*>& t) {
  put<&sources::NvmlApi::deviceGetName>(t, "nvmlDeviceGetName",
                                        [](Dev d, char* out, unsigned n) -> Return {
                                          FAKE_ENTER("nvmlDeviceGetName", d);
                                          return copy_string(gpu_of(d)->name, out, n);
                                        });
  put<&sources::NvmlApi::deviceGetUUID>(
      t, "nvmlDeviceGetUUID", [](Dev d, char* out, unsigned n) -> Return {
        // A MIG device's handle: MIG-<parent's
        // UUID digits>-<handle number>, unique.
        const auto& migs = fake().mig_devices;
        for (std::size_t k = 0; k < migs.size(); ++k) {
          if (reinterpret_cast<Dev>(const_cast<FakeMigDevice*>(&migs[k])) == d) {
            return copy_string("MIG-" + migs[k].parent->uuid.substr(4) + "-" + std::to_string(k),
                               out, n);
          }
        }
        FAKE_ENTER("nvmlDeviceGetUUID", d);
        return copy_string(gpu_of(d)->uuid, out, n);
      });
  put<&sources::NvmlApi::deviceGetIndex>(t, "nvmlDeviceGetIndex", [](Dev d, unsigned* i) -> Return {
    FAKE_ENTER("nvmlDeviceGetIndex", d);
    *i = static_cast<unsigned>(index_of(gpu_of(d)));
    return Return::Success;
  });
  put<&sources::NvmlApi::deviceGetPciInfo_v3>(t, "nvmlDeviceGetPciInfo_v3",
                                              [](Dev d, sources::nvml::PciInfo* pci) -> Return {
                                                FAKE_ENTER("nvmlDeviceGetPciInfo_v3", d);
                                                std::strcpy(pci->busId, "00000000:18:00.0");
                                                return Return::Success;
                                              });
  put<&sources::NvmlApi::deviceGetArchitecture>(t, "nvmlDeviceGetArchitecture",
                                                [](Dev d, unsigned* a) -> Return {
                                                  FAKE_ENTER("nvmlDeviceGetArchitecture", d);
                                                  *a = gpu_of(d)->arch;
                                                  return Return::Success;
                                                });
  put<&sources::NvmlApi::deviceGetCudaComputeCapability>(
      t, "nvmlDeviceGetCudaComputeCapability", [](Dev d, int* major, int* minor) -> Return {
        FAKE_ENTER("nvmlDeviceGetCudaComputeCapability", d);
        *major = gpu_of(d)->cc_major;
        *minor = gpu_of(d)->cc_minor;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetAttributes_v2>(
      t, "nvmlDeviceGetAttributes_v2", [](Dev d, sources::nvml::DeviceAttributes* a) -> Return {
        FAKE_ENTER("nvmlDeviceGetAttributes_v2", d);
        a->multiprocessorCount = gpu_of(d)->attributes_sm;
        return gpu_of(d)->attributes_ret;
      });
  put<&sources::NvmlApi::deviceGetNumGpuCores>(t, "nvmlDeviceGetNumGpuCores",
                                               [](Dev d, unsigned* n) -> Return {
                                                 FAKE_ENTER("nvmlDeviceGetNumGpuCores", d);
                                                 *n = gpu_of(d)->cuda_cores;
                                                 return Return::Success;
                                               });
  put<&sources::NvmlApi::deviceGetEnforcedPowerLimit>(
      t, "nvmlDeviceGetEnforcedPowerLimit", [](Dev d, unsigned* mw) -> Return {
        FAKE_ENTER("nvmlDeviceGetEnforcedPowerLimit", d);
        *mw = gpu_of(d)->power_limit_mw;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetMaxClockInfo>(
      t, "nvmlDeviceGetMaxClockInfo", [](Dev d, int type, unsigned* mhz) -> Return {
        FAKE_ENTER("nvmlDeviceGetMaxClockInfo", d);
        *mhz = type == sources::nvml::kClockMem ? gpu_of(d)->max_mem : gpu_of(d)->max_sm;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetMaxPcieLinkGeneration>(
      t, "nvmlDeviceGetMaxPcieLinkGeneration", [](Dev d, unsigned* v) -> Return {
        FAKE_ENTER("nvmlDeviceGetMaxPcieLink", d);
        *v = 5;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetMaxPcieLinkWidth>(t, "nvmlDeviceGetMaxPcieLinkWidth",
                                                    [](Dev d, unsigned* v) -> Return {
                                                      FAKE_ENTER("nvmlDeviceGetMaxPcieLink", d);
                                                      *v = 16;
                                                      return Return::Success;
                                                    });
  put<&sources::NvmlApi::deviceGetMigMode>(
      t, "nvmlDeviceGetMigMode", [](Dev d, unsigned* current, unsigned* pending) -> Return {
        FAKE_ENTER("nvmlDeviceGetMigMode", d);
        *current = *pending = gpu_of(d)->mig ? 1U : 0U;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetNvLinkState>(
      t, "nvmlDeviceGetNvLinkState", [](Dev d, unsigned link, int* active) -> Return {
        FAKE_ENTER("nvmlDeviceGetNvLinkState", d);
        if (gpu_of(d)->nvlinks_active == 0) return Return::NotSupported;
        if (link >= sources::nvml::kNvlinkMaxLinks) return Return::InvalidArgument;
        *active =
            link < gpu_of(d)->nvlinks_active && !gpu_of(d)->nvlinks_down.contains(link) ? 1 : 0;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetEccMode>(t, "nvmlDeviceGetEccMode",
                                           [](Dev d, int* current, int* pending) -> Return {
                                             FAKE_ENTER("nvmlDeviceGetEccMode", d);
                                             *current = *pending = gpu_of(d)->ecc_mode;
                                             return Return::Success;
                                           });
}

void add_readings(std::map<std::string, void*>& t) {
  put<&sources::NvmlApi::deviceGetUtilizationRates>(
      t, "nvmlDeviceGetUtilizationRates", [](Dev d, sources::nvml::Utilization* u) -> Return {
        FAKE_ENTER("nvmlDeviceGetUtilizationRates", d);
        u->gpu = gpu_of(d)->util_gpu;
        u->memory = gpu_of(d)->util_mem;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetMemoryInfo_v2>(
      t, "nvmlDeviceGetMemoryInfo_v2", [](Dev d, sources::nvml::Memory_v2* m) -> Return {
        FAKE_ENTER("nvmlDeviceGetMemoryInfo_v2", d);
        if (m->version != sources::nvml::kMemoryV2Version) return Return::ArgumentVersionMismatch;
        m->total = gpu_of(d)->mem_total;
        m->used = gpu_of(d)->mem_used;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetPowerUsage>(t, "nvmlDeviceGetPowerUsage",
                                              [](Dev d, unsigned* mw) -> Return {
                                                FAKE_ENTER("nvmlDeviceGetPowerUsage", d);
                                                *mw = gpu_of(d)->power_mw;
                                                return gpu_of(d)->power_ret;
                                              });
  put<&sources::NvmlApi::deviceGetTemperature>(t, "nvmlDeviceGetTemperature",
                                               [](Dev d, int, unsigned* c) -> Return {
                                                 FAKE_ENTER("nvmlDeviceGetTemperature", d);
                                                 *c = gpu_of(d)->temp;
                                                 return Return::Success;
                                               });
  put<&sources::NvmlApi::deviceGetFieldValues>(
      t, "nvmlDeviceGetFieldValues", [](Dev d, int n, sources::nvml::FieldValue* values) -> Return {
        FAKE_ENTER("nvmlDeviceGetFieldValues", d);
        for (int i = 0; i < n; ++i) {
          sources::nvml::FieldValue& v = values[i];
          v.nvmlReturn = v.fieldId == sources::nvml::kFieldMemoryTemp
                             ? gpu_of(d)->mem_temp_field_ret
                             : Return::NotSupported;
          v.valueType = sources::nvml::kValueTypeUnsignedInt;
          v.value.uiVal = gpu_of(d)->mem_temp;
        }
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetClockInfo>(
      t, "nvmlDeviceGetClockInfo", [](Dev d, int type, unsigned* mhz) -> Return {
        FAKE_ENTER("nvmlDeviceGetClockInfo", d);
        *mhz = type == sources::nvml::kClockMem ? gpu_of(d)->mem_clock : gpu_of(d)->sm_clock;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetCurrentClocksEventReasons>(
      t, "nvmlDeviceGetCurrentClocksEventReasons", [](Dev d, unsigned long long* r) -> Return {
        FAKE_ENTER("nvmlDeviceGetCurrentClocksEventReasons", d);
        *r = gpu_of(d)->reasons;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetCurrentClocksThrottleReasons>(
      t, "nvmlDeviceGetCurrentClocksThrottleReasons", [](Dev d, unsigned long long* r) -> Return {
        FAKE_ENTER("nvmlDeviceGetCurrentClocksThrottleReasons", d);
        *r = gpu_of(d)->reasons;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetPerformanceState>(
      t, "nvmlDeviceGetPerformanceState", [](Dev d, int* p) -> Return {
        FAKE_ENTER("nvmlDeviceGetPerformanceState", d);
        *p = gpu_of(d)->pstate;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetTotalEnergyConsumption>(
      t, "nvmlDeviceGetTotalEnergyConsumption", [](Dev d, unsigned long long* mj) -> Return {
        FAKE_ENTER("nvmlDeviceGetTotalEnergyConsumption", d);
        *mj = gpu_of(d)->energy_mj;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetTotalEccErrors>(
      t, "nvmlDeviceGetTotalEccErrors", [](Dev d, int type, int, unsigned long long* n) -> Return {
        FAKE_ENTER("nvmlDeviceGetTotalEccErrors", d);
        if (gpu_of(d)->ecc_mode == 0) return Return::NotSupported;
        if (gpu_of(d)->ecc_ret != Return::Success) return gpu_of(d)->ecc_ret;
        *n = type == sources::nvml::kMemoryErrorCorrected ? gpu_of(d)->ecc_corrected
                                                          : gpu_of(d)->ecc_uncorrected;
        return Return::Success;
      });
}

// dcgm-exporter's default fields (src/sources/nvml/nvml_dcgm_fields.cpp).
void add_dcgm_fields(std::map<std::string, void*>& t) {
  put<&sources::NvmlApi::deviceGetEncoderUtilization>(
      t, "nvmlDeviceGetEncoderUtilization", [](Dev d, unsigned* util, unsigned* period) -> Return {
        FAKE_ENTER("nvmlDeviceGetEncoderUtilization", d);
        if (gpu_of(d)->codec_ret != Return::Success) return gpu_of(d)->codec_ret;
        *util = gpu_of(d)->enc_util;
        *period = 167000;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetDecoderUtilization>(
      t, "nvmlDeviceGetDecoderUtilization", [](Dev d, unsigned* util, unsigned* period) -> Return {
        FAKE_ENTER("nvmlDeviceGetDecoderUtilization", d);
        if (gpu_of(d)->codec_ret != Return::Success) return gpu_of(d)->codec_ret;
        *util = gpu_of(d)->dec_util;
        *period = 167000;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetRemappedRows>(
      t, "nvmlDeviceGetRemappedRows",
      [](Dev d, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failed) -> Return {
        FAKE_ENTER("nvmlDeviceGetRemappedRows", d);
        const FakeGpu& g = *gpu_of(d);
        if (g.remapped_ret != Return::Success) return g.remapped_ret;
        *corr = g.remapped_correctable;
        *unc = g.remapped_uncorrectable;
        *pending = 0;
        *failed = g.remap_failed;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetPcieReplayCounter>(
      t, "nvmlDeviceGetPcieReplayCounter", [](Dev d, unsigned* value) -> Return {
        FAKE_ENTER("nvmlDeviceGetPcieReplayCounter", d);
        if (gpu_of(d)->pcie_replay_ret != Return::Success) return gpu_of(d)->pcie_replay_ret;
        *value = gpu_of(d)->pcie_replays;
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetNvLinkErrorCounter>(
      t, "nvmlDeviceGetNvLinkErrorCounter",
      [](Dev d, unsigned link, unsigned counter, unsigned long long* value) -> Return {
        FAKE_ENTER("nvmlDeviceGetNvLinkErrorCounter", d);
        const FakeGpu& g = *gpu_of(d);
        // Counted per link as well, so that a test can tell which links were read.
        ++fake().calls["nvmlDeviceGetNvLinkErrorCounter#" + std::to_string(index_of(&g)) + "/link" +
                       std::to_string(link)];
        if (g.nvlinks_active == 0) return Return::NotSupported;
        if (link >= sources::nvml::kNvlinkMaxLinks || counter >= g.nvlink_errors.size()) {
          return Return::InvalidArgument;
        }
        if (const auto it = g.nvlink_counter_ret.find(counter); it != g.nvlink_counter_ret.end()) {
          return it->second;
        }
        *value = g.nvlink_errors[counter];
        return Return::Success;
      });
}

void add_processes(std::map<std::string, void*>& t) {
  put<&sources::NvmlApi::deviceGetComputeRunningProcesses_v3>(
      t, "nvmlDeviceGetComputeRunningProcesses_v3",
      [](Dev d, unsigned* n, sources::nvml::ProcessInfo_v3* out) -> Return {
        FAKE_ENTER("nvmlDeviceGetComputeRunningProcesses_v3", d);
        return list(gpu_of(d)->compute, n, out);
      });
  put<&sources::NvmlApi::deviceGetGraphicsRunningProcesses_v3>(
      t, "nvmlDeviceGetGraphicsRunningProcesses_v3",
      [](Dev d, unsigned* n, sources::nvml::ProcessInfo_v3* out) -> Return {
        FAKE_ENTER("nvmlDeviceGetGraphicsRunningProcesses_v3", d);
        return list(gpu_of(d)->graphics, n, out);
      });
  put<&sources::NvmlApi::deviceGetProcessUtilization>(
      t, "nvmlDeviceGetProcessUtilization",
      [](Dev d, sources::nvml::ProcessUtilizationSample* out, unsigned* n,
         unsigned long long last_seen) -> Return {
        FAKE_ENTER("nvmlDeviceGetProcessUtilization", d);
        if (gpu_of(d)->proc_util_ret != Return::Success) return gpu_of(d)->proc_util_ret;
        std::vector<sources::nvml::ProcessUtilizationSample> newer;
        for (const auto& s : gpu_of(d)->util_samples) {
          if (s.timeStamp > last_seen) newer.push_back(s);
        }
        if (newer.empty()) return Return::NotFound;
        if (*n < newer.size() || out == nullptr) {
          *n = static_cast<unsigned>(newer.size());
          return Return::InsufficientSize;
        }
        for (std::size_t i = 0; i < newer.size(); ++i) out[i] = newer[i];
        *n = static_cast<unsigned>(newer.size());
        return Return::Success;
      });
}

}  // namespace

const std::map<std::string, void*>& FakeNvml::functions() {
  static const std::map<std::string, void*> table = [] {
    std::map<std::string, void*> t;
    add_system(t);
    add_static(t);
    add_readings(t);
    add_dcgm_fields(t);
    add_processes(t);
    fake_detail::add_events_and_mig(t);
    fake_detail::add_gpm(t);
    return t;
  }();
  return table;
}

}  // namespace gpulens::testing

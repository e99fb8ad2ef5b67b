// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every NVML entry point gpulens calls, loaded at run time (DCGM's loader pattern):
// one table in nvml_api.cpp names each versioned symbol, whether it is required, and
// the member below it fills. A missing optional symbol leaves its pointer null, which
// turns the matching capability off. Members mirror NVML's names without the prefix
// so that a grep for the C name finds its use.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "sources/nvml/nvml_types.hpp"

namespace gpulens::sources {

struct NvmlApi {
  using R = nvml::Return;
  using Dev = nvml::Device;

  // Required: without these gpulens can do nothing useful.
  R (*init_v2)() = nullptr;
  R (*shutdown)() = nullptr;
  R (*deviceGetCount_v2)(unsigned*) = nullptr;
  R (*deviceGetHandleByIndex_v2)(unsigned, Dev*) = nullptr;
  R (*deviceGetName)(Dev, char*, unsigned) = nullptr;
  R (*deviceGetUUID)(Dev, char*, unsigned) = nullptr;
  R (*deviceGetUtilizationRates)(Dev, nvml::Utilization*) = nullptr;

  // Optional: static device facts, probed once at open.
  const char* (*errorString)(R) = nullptr;
  R (*systemGetDriverVersion)(char*, unsigned) = nullptr;
  R (*deviceGetIndex)(Dev, unsigned*) = nullptr;
  R (*deviceGetPciInfo_v3)(Dev, nvml::PciInfo*) = nullptr;
  R (*deviceGetArchitecture)(Dev, unsigned*) = nullptr;
  R (*deviceGetCudaComputeCapability)(Dev, int*, int*) = nullptr;
  R (*deviceGetAttributes_v2)(Dev, nvml::DeviceAttributes*) = nullptr;
  R (*deviceGetNumGpuCores)(Dev, unsigned*) = nullptr;
  R (*deviceGetEnforcedPowerLimit)(Dev, unsigned*) = nullptr;
  R (*deviceGetMaxClockInfo)(Dev, int, unsigned*) = nullptr;
  R (*deviceGetMaxPcieLinkGeneration)(Dev, unsigned*) = nullptr;
  R (*deviceGetMaxPcieLinkWidth)(Dev, unsigned*) = nullptr;
  R (*deviceGetMigMode)(Dev, unsigned*, unsigned*) = nullptr;
  R (*deviceGetNvLinkState)(Dev, unsigned, int*) = nullptr;
  R (*deviceGetEccMode)(Dev, int*, int*) = nullptr;

  // Optional: per-tick readings.
  R (*deviceGetMemoryInfo_v2)(Dev, nvml::Memory_v2*) = nullptr;
  R (*deviceGetPowerUsage)(Dev, unsigned*) = nullptr;
  R (*deviceGetTemperature)(Dev, int, unsigned*) = nullptr;
  R (*deviceGetFieldValues)(Dev, int, nvml::FieldValue*) = nullptr;
  R (*deviceGetClockInfo)(Dev, int, unsigned*) = nullptr;
  R (*deviceGetCurrentClocksEventReasons)(Dev, unsigned long long*) = nullptr;
  R (*deviceGetCurrentClocksThrottleReasons)(Dev, unsigned long long*) = nullptr;
  R (*deviceGetPerformanceState)(Dev, int*) = nullptr;
  R (*deviceGetTotalEnergyConsumption)(Dev, unsigned long long*) = nullptr;
  R (*deviceGetTotalEccErrors)(Dev, int, int, unsigned long long*) = nullptr;
  // The dcgm-exporter default fields (nvml_health_fields.cpp). Utilizations take
  // (utilization %, sampling period us); remapped rows (correctable, uncorrectable,
  // pending, failure occurred); the NVLink counter (link, nvmlNvLinkErrorCounter_t).
  R (*deviceGetEncoderUtilization)(Dev, unsigned*, unsigned*) = nullptr;
  R (*deviceGetDecoderUtilization)(Dev, unsigned*, unsigned*) = nullptr;
  R (*deviceGetRemappedRows)(Dev, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  R (*deviceGetPcieReplayCounter)(Dev, unsigned*) = nullptr;
  R (*deviceGetNvLinkErrorCounter)(Dev, unsigned, unsigned, unsigned long long*) = nullptr;

  // Optional: processes.
  R (*deviceGetComputeRunningProcesses_v3)(Dev, unsigned*, nvml::ProcessInfo_v3*) = nullptr;
  R (*deviceGetGraphicsRunningProcesses_v3)(Dev, unsigned*, nvml::ProcessInfo_v3*) = nullptr;
  R(*deviceGetProcessUtilization)
  (Dev, nvml::ProcessUtilizationSample*, unsigned*, unsigned long long) = nullptr;

  // Optional: XID events.
  R (*eventSetCreate)(nvml::EventSet*) = nullptr;
  R (*deviceRegisterEvents)(Dev, unsigned long long, nvml::EventSet) = nullptr;
  R (*eventSetWait_v2)(nvml::EventSet, nvml::EventData*, unsigned) = nullptr;
  R (*eventSetFree)(nvml::EventSet) = nullptr;

  // Optional: MIG instances.
  R (*deviceGetMaxMigDeviceCount)(Dev, unsigned*) = nullptr;
  R (*deviceGetMigDeviceHandleByIndex)(Dev, unsigned, Dev*) = nullptr;
  R (*deviceGetGpuInstanceId)(Dev, unsigned*) = nullptr;

  // Optional: GPM (driver R520+, Hopper+ GPUs).
  R (*gpmQueryDeviceSupport)(Dev, nvml::GpmSupport*) = nullptr;
  R (*gpmSampleAlloc)(nvml::GpmSample*) = nullptr;
  R (*gpmSampleFree)(nvml::GpmSample) = nullptr;
  R (*gpmSampleGet)(Dev, nvml::GpmSample) = nullptr;
  R (*gpmMigSampleGet)(Dev, unsigned, nvml::GpmSample) = nullptr;
  R (*gpmMetricsGet)(nvml::GpmMetricsGet*) = nullptr;

  // Optional symbols the library lacked, for diagnostics.
  std::vector<std::string> missing;
  // The dlopen handle (dlclose on last release); empty when symbols came from a test.
  std::shared_ptr<void> library;

  bool has_gpm() const {
    return gpmQueryDeviceSupport && gpmSampleAlloc && gpmSampleFree && gpmSampleGet &&
           gpmMetricsGet;
  }
  bool has_mig_gpm() const {
    return has_gpm() && gpmMigSampleGet && deviceGetMaxMigDeviceCount &&
           deviceGetMigDeviceHandleByIndex && deviceGetGpuInstanceId;
  }
  bool has_events() const {
    return eventSetCreate && deviceRegisterEvents && eventSetWait_v2 && eventSetFree;
  }
};

// One row of the entry-point table.
struct NvmlEntryPoint {
  const char* symbol;  // the versioned name passed to dlsym
  bool required;
  void (*assign)(NvmlApi& api, void* address);  // stores address into its member
};
std::span<const NvmlEntryPoint> nvml_entry_points();

// Resolves a symbol name to its address, or nullptr. Tests pass fakes here.
using NvmlSymbolLookup = std::function<void*(const char* symbol)>;

// Fills an NvmlApi from `lookup`; an Error names any missing required symbol.
Result<NvmlApi> load_nvml_api(const NvmlSymbolLookup& lookup);

// dlopens libnvidia-ml.so.1 (then libnvidia-ml.so) and loads the table from it.
Result<NvmlApi> load_nvml_library();

// NVML's own text for a return code when nvmlErrorString is loaded, else ours.
const char* nvml_error_string(int code, const NvmlApi* api = nullptr);
inline const char* nvml_error_string(nvml::Return r, const NvmlApi* api = nullptr) {
  return nvml_error_string(nvml::code(r), api);
}
// The C constant's name, e.g. "NVML_ERROR_NO_PERMISSION", for messages users search for.
const char* nvml_error_name(int code);
inline const char* nvml_error_name(nvml::Return r) {
  return nvml_error_name(nvml::code(r));
}

}  // namespace gpulens::sources

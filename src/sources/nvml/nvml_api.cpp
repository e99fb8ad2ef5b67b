// SPDX-License-Identifier: Apache-2.0
#include "sources/nvml/nvml_api.hpp"

#include <dlfcn.h>

#include <array>
#include <string>
#include <type_traits>

namespace gpulens::sources {
namespace {

// Stores a dlsym address into one member. Casting an object pointer to a function
// pointer is conditionally supported in C++ and always supported by POSIX (dlsym).
template <auto Member>
void assign(NvmlApi& api, void* address) {
  using Fn = std::remove_reference_t<decltype(api.*Member)>;
  api.*Member = reinterpret_cast<Fn>(address);
}

constexpr bool kRequired = true;
constexpr bool kOptional = false;

constexpr std::array kEntryPoints{
    NvmlEntryPoint{"nvmlInit_v2", kRequired, &assign<&NvmlApi::init_v2>},
    NvmlEntryPoint{"nvmlShutdown", kRequired, &assign<&NvmlApi::shutdown>},
    NvmlEntryPoint{"nvmlDeviceGetCount_v2", kRequired, &assign<&NvmlApi::deviceGetCount_v2>},
    NvmlEntryPoint{"nvmlDeviceGetHandleByIndex_v2", kRequired,
                   &assign<&NvmlApi::deviceGetHandleByIndex_v2>},
    NvmlEntryPoint{"nvmlDeviceGetName", kRequired, &assign<&NvmlApi::deviceGetName>},
    NvmlEntryPoint{"nvmlDeviceGetUUID", kRequired, &assign<&NvmlApi::deviceGetUUID>},
    NvmlEntryPoint{"nvmlDeviceGetUtilizationRates", kRequired,
                   &assign<&NvmlApi::deviceGetUtilizationRates>},

    NvmlEntryPoint{"nvmlErrorString", kOptional, &assign<&NvmlApi::errorString>},
    NvmlEntryPoint{"nvmlSystemGetDriverVersion", kOptional,
                   &assign<&NvmlApi::systemGetDriverVersion>},
    NvmlEntryPoint{"nvmlDeviceGetIndex", kOptional, &assign<&NvmlApi::deviceGetIndex>},
    NvmlEntryPoint{"nvmlDeviceGetPciInfo_v3", kOptional, &assign<&NvmlApi::deviceGetPciInfo_v3>},
    NvmlEntryPoint{"nvmlDeviceGetArchitecture", kOptional,
                   &assign<&NvmlApi::deviceGetArchitecture>},
    NvmlEntryPoint{"nvmlDeviceGetCudaComputeCapability", kOptional,
                   &assign<&NvmlApi::deviceGetCudaComputeCapability>},
    NvmlEntryPoint{"nvmlDeviceGetAttributes_v2", kOptional,
                   &assign<&NvmlApi::deviceGetAttributes_v2>},
    NvmlEntryPoint{"nvmlDeviceGetNumGpuCores", kOptional, &assign<&NvmlApi::deviceGetNumGpuCores>},
    NvmlEntryPoint{"nvmlDeviceGetEnforcedPowerLimit", kOptional,
                   &assign<&NvmlApi::deviceGetEnforcedPowerLimit>},
    NvmlEntryPoint{"nvmlDeviceGetMaxClockInfo", kOptional,
                   &assign<&NvmlApi::deviceGetMaxClockInfo>},
    NvmlEntryPoint{"nvmlDeviceGetMaxPcieLinkGeneration", kOptional,
                   &assign<&NvmlApi::deviceGetMaxPcieLinkGeneration>},
    NvmlEntryPoint{"nvmlDeviceGetMaxPcieLinkWidth", kOptional,
                   &assign<&NvmlApi::deviceGetMaxPcieLinkWidth>},
    NvmlEntryPoint{"nvmlDeviceGetMigMode", kOptional, &assign<&NvmlApi::deviceGetMigMode>},
    NvmlEntryPoint{"nvmlDeviceGetNvLinkState", kOptional, &assign<&NvmlApi::deviceGetNvLinkState>},
    NvmlEntryPoint{"nvmlDeviceGetEccMode", kOptional, &assign<&NvmlApi::deviceGetEccMode>},

    NvmlEntryPoint{"nvmlDeviceGetMemoryInfo_v2", kOptional,
                   &assign<&NvmlApi::deviceGetMemoryInfo_v2>},
    NvmlEntryPoint{"nvmlDeviceGetPowerUsage", kOptional, &assign<&NvmlApi::deviceGetPowerUsage>},
    NvmlEntryPoint{"nvmlDeviceGetTemperature", kOptional, &assign<&NvmlApi::deviceGetTemperature>},
    NvmlEntryPoint{"nvmlDeviceGetFieldValues", kOptional, &assign<&NvmlApi::deviceGetFieldValues>},
    NvmlEntryPoint{"nvmlDeviceGetClockInfo", kOptional, &assign<&NvmlApi::deviceGetClockInfo>},
    NvmlEntryPoint{"nvmlDeviceGetCurrentClocksEventReasons", kOptional,
                   &assign<&NvmlApi::deviceGetCurrentClocksEventReasons>},
    NvmlEntryPoint{"nvmlDeviceGetCurrentClocksThrottleReasons", kOptional,
                   &assign<&NvmlApi::deviceGetCurrentClocksThrottleReasons>},
    NvmlEntryPoint{"nvmlDeviceGetPerformanceState", kOptional,
                   &assign<&NvmlApi::deviceGetPerformanceState>},
    NvmlEntryPoint{"nvmlDeviceGetTotalEnergyConsumption", kOptional,
                   &assign<&NvmlApi::deviceGetTotalEnergyConsumption>},
    NvmlEntryPoint{"nvmlDeviceGetTotalEccErrors", kOptional,
                   &assign<&NvmlApi::deviceGetTotalEccErrors>},
    NvmlEntryPoint{"nvmlDeviceGetEncoderUtilization", kOptional,
                   &assign<&NvmlApi::deviceGetEncoderUtilization>},
    NvmlEntryPoint{"nvmlDeviceGetDecoderUtilization", kOptional,
                   &assign<&NvmlApi::deviceGetDecoderUtilization>},
    NvmlEntryPoint{"nvmlDeviceGetRemappedRows", kOptional,
                   &assign<&NvmlApi::deviceGetRemappedRows>},
    NvmlEntryPoint{"nvmlDeviceGetPcieReplayCounter", kOptional,
                   &assign<&NvmlApi::deviceGetPcieReplayCounter>},
    NvmlEntryPoint{"nvmlDeviceGetNvLinkErrorCounter", kOptional,
                   &assign<&NvmlApi::deviceGetNvLinkErrorCounter>},

    NvmlEntryPoint{"nvmlDeviceGetComputeRunningProcesses_v3", kOptional,
                   &assign<&NvmlApi::deviceGetComputeRunningProcesses_v3>},
    NvmlEntryPoint{"nvmlDeviceGetGraphicsRunningProcesses_v3", kOptional,
                   &assign<&NvmlApi::deviceGetGraphicsRunningProcesses_v3>},
    NvmlEntryPoint{"nvmlDeviceGetProcessUtilization", kOptional,
                   &assign<&NvmlApi::deviceGetProcessUtilization>},

    NvmlEntryPoint{"nvmlEventSetCreate", kOptional, &assign<&NvmlApi::eventSetCreate>},
    NvmlEntryPoint{"nvmlDeviceRegisterEvents", kOptional, &assign<&NvmlApi::deviceRegisterEvents>},
    NvmlEntryPoint{"nvmlEventSetWait_v2", kOptional, &assign<&NvmlApi::eventSetWait_v2>},
    NvmlEntryPoint{"nvmlEventSetFree", kOptional, &assign<&NvmlApi::eventSetFree>},

    NvmlEntryPoint{"nvmlDeviceGetMaxMigDeviceCount", kOptional,
                   &assign<&NvmlApi::deviceGetMaxMigDeviceCount>},
    NvmlEntryPoint{"nvmlDeviceGetMigDeviceHandleByIndex", kOptional,
                   &assign<&NvmlApi::deviceGetMigDeviceHandleByIndex>},
    NvmlEntryPoint{"nvmlDeviceGetGpuInstanceId", kOptional,
                   &assign<&NvmlApi::deviceGetGpuInstanceId>},

    NvmlEntryPoint{"nvmlGpmQueryDeviceSupport", kOptional,
                   &assign<&NvmlApi::gpmQueryDeviceSupport>},
    NvmlEntryPoint{"nvmlGpmSampleAlloc", kOptional, &assign<&NvmlApi::gpmSampleAlloc>},
    NvmlEntryPoint{"nvmlGpmSampleFree", kOptional, &assign<&NvmlApi::gpmSampleFree>},
    NvmlEntryPoint{"nvmlGpmSampleGet", kOptional, &assign<&NvmlApi::gpmSampleGet>},
    NvmlEntryPoint{"nvmlGpmMigSampleGet", kOptional, &assign<&NvmlApi::gpmMigSampleGet>},
    NvmlEntryPoint{"nvmlGpmMetricsGet", kOptional, &assign<&NvmlApi::gpmMetricsGet>},
};

constexpr const char* kFixHint =
    "install or update the NVIDIA driver (it ships libnvidia-ml), or run with --replay FILE "
    "to read a recorded trace instead of a live GPU";

struct ErrorText {
  int code;
  const char* name;
  const char* text;
};

// Used when nvmlErrorString is not loaded (and for the constant names).
constexpr std::array kErrorTexts{
    ErrorText{0, "NVML_SUCCESS", "success"},
    ErrorText{1, "NVML_ERROR_UNINITIALIZED", "NVML was not initialized"},
    ErrorText{2, "NVML_ERROR_INVALID_ARGUMENT", "invalid argument"},
    ErrorText{3, "NVML_ERROR_NOT_SUPPORTED", "not supported"},
    ErrorText{4, "NVML_ERROR_NO_PERMISSION", "insufficient permissions"},
    ErrorText{5, "NVML_ERROR_ALREADY_INITIALIZED", "already initialized"},
    ErrorText{6, "NVML_ERROR_NOT_FOUND", "not found"},
    ErrorText{7, "NVML_ERROR_INSUFFICIENT_SIZE", "buffer too small"},
    ErrorText{8, "NVML_ERROR_INSUFFICIENT_POWER", "insufficient external power"},
    ErrorText{9, "NVML_ERROR_DRIVER_NOT_LOADED", "NVIDIA driver is not loaded"},
    ErrorText{10, "NVML_ERROR_TIMEOUT", "timeout"},
    ErrorText{11, "NVML_ERROR_IRQ_ISSUE", "interrupt request issue"},
    ErrorText{12, "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML shared library not found"},
    ErrorText{13, "NVML_ERROR_FUNCTION_NOT_FOUND", "function not found in this driver"},
    ErrorText{14, "NVML_ERROR_CORRUPTED_INFOROM", "corrupted infoROM"},
    ErrorText{15, "NVML_ERROR_GPU_IS_LOST", "GPU is lost (fell off the bus)"},
    ErrorText{16, "NVML_ERROR_RESET_REQUIRED", "GPU requires a reset"},
    ErrorText{17, "NVML_ERROR_OPERATING_SYSTEM", "the operating system blocked the request"},
    ErrorText{18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
              "NVML library and kernel driver versions differ"},
    ErrorText{19, "NVML_ERROR_IN_USE", "in use by another client"},
    ErrorText{20, "NVML_ERROR_MEMORY", "out of memory"},
    ErrorText{21, "NVML_ERROR_NO_DATA", "no data"},
    ErrorText{22, "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", "ECC not supported with vGPU"},
    ErrorText{23, "NVML_ERROR_INSUFFICIENT_RESOURCES", "insufficient resources"},
    ErrorText{24, "NVML_ERROR_FREQ_NOT_SUPPORTED", "frequency not supported"},
    ErrorText{25, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "struct version mismatch"},
    ErrorText{26, "NVML_ERROR_DEPRECATED", "deprecated"},
    ErrorText{27, "NVML_ERROR_NOT_READY", "not ready"},
    ErrorText{28, "NVML_ERROR_GPU_NOT_FOUND", "GPU not found"},
    ErrorText{29, "NVML_ERROR_INVALID_STATE", "invalid state"},
    ErrorText{999, "NVML_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* find_error(int code) {
  for (const auto& e : kErrorTexts) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

}  // namespace

std::span<const NvmlEntryPoint> nvml_entry_points() {
  return kEntryPoints;
}

Result<NvmlApi> load_nvml_api(const NvmlSymbolLookup& lookup) {
  NvmlApi api;
  std::string missing_required;
  for (const auto& entry : kEntryPoints) {
    void* address = lookup(entry.symbol);
    if (address != nullptr) {
      entry.assign(api, address);
    } else if (entry.required) {
      if (!missing_required.empty()) missing_required += ", ";
      missing_required += entry.symbol;
    } else {
      api.missing.emplace_back(entry.symbol);
    }
  }
  if (!missing_required.empty()) {
    return Error{"NVML lacks required function(s) " + missing_required +
                 ": the NVIDIA driver is too old or damaged; " + kFixHint};
  }
  return api;
}

Result<NvmlApi> load_nvml_library() {
  // The .so.1 name is what the driver installs; the unversioned one only comes with
  // development packages, so it is the fallback.
  constexpr std::array kNames{"libnvidia-ml.so.1", "libnvidia-ml.so"};
  std::string why;
  void* handle = nullptr;
  for (const char* name : kNames) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    const char* err = dlerror();
    if (!why.empty()) why += "; ";
    why += err != nullptr ? err : name;
  }
  if (handle == nullptr) {
    return Error{"cannot load NVML (looked for libnvidia-ml.so.1 and libnvidia-ml.so: " + why +
                 "): " + kFixHint};
  }
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });
  auto api = load_nvml_api([&](const char* symbol) { return dlsym(handle, symbol); });
  if (!api) return api.error();
  api->library = std::move(library);
  return api;
}

const char* nvml_error_string(int code, const NvmlApi* api) {
  if (api != nullptr && api->errorString != nullptr) {
    const char* text = api->errorString(static_cast<nvml::Return>(code));
    if (text != nullptr) return text;
  }
  const ErrorText* e = find_error(code);
  return e != nullptr ? e->text : "unrecognized NVML error";
}

const char* nvml_error_name(int code) {
  const ErrorText* e = find_error(code);
  return e != nullptr ? e->name : "NVML_ERROR_UNKNOWN";
}

}  // namespace gpulens::sources

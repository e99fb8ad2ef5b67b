// SPDX-License-Identifier: Apache-2.0
#include "sources/dcgm/dcgm_api.hpp"

#include <dlfcn.h>

#include <array>
#include <string>
#include <type_traits>

namespace gpulens::sources {
namespace {

struct DcgmEntryPoint {
  const char* symbol;
  bool required;
  void (*assign)(DcgmApi& api, void* address);
};

// Casting an object pointer to a function pointer is conditionally supported in C++
// and always supported by POSIX (dlsym).
template <auto Member>
void assign_dcgm(DcgmApi& api, void* address) {
  using Fn = std::remove_reference_t<decltype(api.*Member)>;
  api.*Member = reinterpret_cast<Fn>(address);
}

constexpr bool kDcgmRequired = true;
constexpr bool kDcgmOptional = false;

// The symbols of agent.h (dcgm_abi.hpp names the commit): all exist in DCGM 3 and 4.
constexpr std::array kDcgmEntryPoints{
    DcgmEntryPoint{"dcgmInit", kDcgmRequired, &assign_dcgm<&DcgmApi::init>},
    DcgmEntryPoint{"dcgmShutdown", kDcgmRequired, &assign_dcgm<&DcgmApi::shutdown>},
    DcgmEntryPoint{"dcgmConnect_v2", kDcgmRequired, &assign_dcgm<&DcgmApi::connect_v2>},
    DcgmEntryPoint{"dcgmDisconnect", kDcgmRequired, &assign_dcgm<&DcgmApi::disconnect>},
    DcgmEntryPoint{"dcgmGetAllSupportedDevices", kDcgmRequired,
                   &assign_dcgm<&DcgmApi::getAllSupportedDevices>},
    DcgmEntryPoint{"dcgmGroupCreate", kDcgmRequired, &assign_dcgm<&DcgmApi::groupCreate>},
    DcgmEntryPoint{"dcgmGroupDestroy", kDcgmRequired, &assign_dcgm<&DcgmApi::groupDestroy>},
    DcgmEntryPoint{"dcgmGroupAddDevice", kDcgmRequired, &assign_dcgm<&DcgmApi::groupAddDevice>},
    DcgmEntryPoint{"dcgmFieldGroupCreate", kDcgmRequired, &assign_dcgm<&DcgmApi::fieldGroupCreate>},
    DcgmEntryPoint{"dcgmFieldGroupDestroy", kDcgmRequired,
                   &assign_dcgm<&DcgmApi::fieldGroupDestroy>},
    DcgmEntryPoint{"dcgmWatchFields", kDcgmRequired, &assign_dcgm<&DcgmApi::watchFields>},
    DcgmEntryPoint{"dcgmUnwatchFields", kDcgmRequired, &assign_dcgm<&DcgmApi::unwatchFields>},
    DcgmEntryPoint{"dcgmEntitiesGetLatestValues", kDcgmRequired,
                   &assign_dcgm<&DcgmApi::entitiesGetLatestValues>},
    DcgmEntryPoint{"errorString", kDcgmOptional, &assign_dcgm<&DcgmApi::errorString>},
    DcgmEntryPoint{"dcgmStartEmbedded", kDcgmOptional, &assign_dcgm<&DcgmApi::startEmbedded>},
    DcgmEntryPoint{"dcgmStopEmbedded", kDcgmOptional, &assign_dcgm<&DcgmApi::stopEmbedded>},
};

constexpr std::array<const char*, 2> kDcgmLibraryNames{"libdcgm.so.4", "libdcgm.so.3"};

struct DcgmErrorName {
  int code;
  const char* name;
};

// structs.h:346-392, the codes a profiling watch and read can return.
constexpr std::array kDcgmErrorNames{
    DcgmErrorName{0, "DCGM_ST_OK"},
    DcgmErrorName{-1, "DCGM_ST_BADPARAM"},
    DcgmErrorName{-3, "DCGM_ST_GENERIC_ERROR"},
    DcgmErrorName{-4, "DCGM_ST_MEMORY"},
    DcgmErrorName{-5, "DCGM_ST_NOT_CONFIGURED"},
    DcgmErrorName{-6, "DCGM_ST_NOT_SUPPORTED"},
    DcgmErrorName{-7, "DCGM_ST_INIT_ERROR"},
    DcgmErrorName{-8, "DCGM_ST_NVML_ERROR"},
    DcgmErrorName{-9, "DCGM_ST_PENDING"},
    DcgmErrorName{-10, "DCGM_ST_UNINITIALIZED"},
    DcgmErrorName{-11, "DCGM_ST_TIMEOUT"},
    DcgmErrorName{-12, "DCGM_ST_VER_MISMATCH"},
    DcgmErrorName{-13, "DCGM_ST_UNKNOWN_FIELD"},
    DcgmErrorName{-14, "DCGM_ST_NO_DATA"},
    DcgmErrorName{-15, "DCGM_ST_STALE_DATA"},
    DcgmErrorName{-16, "DCGM_ST_NOT_WATCHED"},
    DcgmErrorName{-17, "DCGM_ST_NO_PERMISSION"},
    DcgmErrorName{-18, "DCGM_ST_GPU_IS_LOST"},
    DcgmErrorName{-19, "DCGM_ST_RESET_REQUIRED"},
    DcgmErrorName{-20, "DCGM_ST_FUNCTION_NOT_FOUND"},
    DcgmErrorName{-21, "DCGM_ST_CONNECTION_NOT_VALID"},
    DcgmErrorName{-22, "DCGM_ST_GPU_NOT_SUPPORTED"},
    DcgmErrorName{-23, "DCGM_ST_GROUP_INCOMPATIBLE"},
    DcgmErrorName{-24, "DCGM_ST_MAX_LIMIT"},
    DcgmErrorName{-25, "DCGM_ST_LIBRARY_NOT_FOUND"},
    DcgmErrorName{-29, "DCGM_ST_REQUIRES_ROOT"},
    DcgmErrorName{-33, "DCGM_ST_MODULE_NOT_LOADED"},
    DcgmErrorName{-34, "DCGM_ST_IN_USE"},
    DcgmErrorName{-35, "DCGM_ST_GROUP_IS_EMPTY"},
    DcgmErrorName{-36, "DCGM_ST_PROFILING_NOT_SUPPORTED"},
    DcgmErrorName{-37, "DCGM_ST_PROFILING_LIBRARY_ERROR"},
    DcgmErrorName{-38, "DCGM_ST_PROFILING_MULTI_PASS"},
    DcgmErrorName{-44, "DCGM_ST_INSUFFICIENT_DRIVER_VERSION"},
};

}  // namespace

Result<DcgmApi> load_dcgm_api(const DcgmSymbolLookup& lookup) {
  DcgmApi api;
  std::string missing;
  for (const auto& entry : kDcgmEntryPoints) {
    void* address = lookup(entry.symbol);
    if (address != nullptr) {
      entry.assign(api, address);
    } else if (entry.required) {
      if (!missing.empty()) missing += ", ";
      missing += entry.symbol;
    }
  }
  if (!missing.empty()) {
    return Error{"libdcgm lacks " + missing +
                 ": it is older than DCGM 3 or damaged (gpulens needs DCGM 3 or 4)"};
  }
  return api;
}

std::span<const char* const> dcgm_library_names() {
  return kDcgmLibraryNames;
}

Result<DcgmApi> load_dcgm_library(std::span<const char* const> names) {
  std::string why;
  void* handle = nullptr;
  const char* loaded = nullptr;
  for (const char* name : names) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      loaded = name;
      break;
    }
    const char* err = dlerror();
    if (!why.empty()) why += "; ";
    why += err != nullptr ? err : name;
  }
  if (handle == nullptr) return Error{"cannot load libdcgm (" + why + ")"};
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });
  auto api = load_dcgm_api([&](const char* symbol) { return dlsym(handle, symbol); });
  if (!api) return Error{std::string(loaded) + ": " + api.error().message};
  api->library = std::move(library);
  api->path = loaded;
  return api;
}

std::string dcgm_error_name(int code) {
  for (const auto& e : kDcgmErrorNames) {
    if (e.code == code) return e.name;
  }
  return "DCGM error " + std::to_string(code);
}

std::string dcgm_error_text(dcgm::Return r, const DcgmApi& api) {
  std::string text = dcgm_error_name(r);
  if (api.errorString != nullptr) {
    if (const char* own = api.errorString(r); own != nullptr && *own != '\0') {
      text += std::string(" (") + own + ")";
    }
  }
  return text;
}

}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every DCGM entry point gpulens calls, loaded at run time as NVML is (nvml_api.hpp):
// one table in dcgm_api.cpp names each symbol and the member it fills. All are
// required but the embedded engine's pair: a libdcgm without one of them is too old.
// Members mirror DCGM's names without the prefix, so a grep for the C name finds them.
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "core/result.hpp"
#include "sources/dcgm/dcgm_abi.hpp"

namespace gpulens::sources {

struct DcgmApi {
  using R = dcgm::Return;
  using H = dcgm::Handle;

  R (*init)() = nullptr;
  R (*shutdown)() = nullptr;
  R (*connect_v2)(const char*, dcgm::ConnectV2Params_v2*, H*) = nullptr;
  R (*disconnect)(H) = nullptr;
  R (*getAllSupportedDevices)(H, unsigned*, int*) = nullptr;
  R (*groupCreate)(H, int, const char*, dcgm::GpuGroup*) = nullptr;
  R (*groupDestroy)(H, dcgm::GpuGroup) = nullptr;
  R (*groupAddDevice)(H, dcgm::GpuGroup, unsigned) = nullptr;
  R (*fieldGroupCreate)(H, int, const unsigned short*, const char*, dcgm::FieldGroup*) = nullptr;
  R (*fieldGroupDestroy)(H, dcgm::FieldGroup) = nullptr;
  R (*watchFields)(H, dcgm::GpuGroup, dcgm::FieldGroup, long long, double, int) = nullptr;
  R (*unwatchFields)(H, dcgm::GpuGroup, dcgm::FieldGroup) = nullptr;
  using LatestValuesFn = R (*)(H, dcgm::GroupEntityPair*, unsigned, unsigned short*, unsigned,
                               unsigned, dcgm::FieldValue_v2*);
  LatestValuesFn entitiesGetLatestValues = nullptr;
  const char* (*errorString)(R) = nullptr;  // DCGM's symbol is plain `errorString`

  // Optional: only `--dcgm embedded` needs them.
  R (*startEmbedded)(int, H*) = nullptr;
  R (*stopEmbedded)(H) = nullptr;

  // The dlopen handle (dlclose on last release); empty when symbols came from a test.
  std::shared_ptr<void> library;
  std::string path;  // the name dlopen took, for messages
};

// Resolves a symbol name to its address, or nullptr.
using DcgmSymbolLookup = std::function<void*(const char* symbol)>;

// Fills a DcgmApi from `lookup`; an Error names every missing required symbol.
Result<DcgmApi> load_dcgm_api(const DcgmSymbolLookup& lookup);

// The names tried in order: DCGM 4's library, then DCGM 3's.
std::span<const char* const> dcgm_library_names();

// dlopens the first of `names` that loads and fills the table from it.
Result<DcgmApi> load_dcgm_library(std::span<const char* const> names = dcgm_library_names());

// The C constant's name, e.g. "DCGM_ST_IN_USE", for messages people search for.
std::string dcgm_error_name(int code);
inline std::string dcgm_error_name(dcgm::Return r) {
  return dcgm_error_name(dcgm::code(r));
}
// "DCGM_ST_IN_USE: <DCGM's own text>" when errorString is loaded.
std::string dcgm_error_text(dcgm::Return r, const DcgmApi& api);

}  // namespace gpulens::sources

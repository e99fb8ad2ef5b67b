// SPDX-License-Identifier: Apache-2.0
// A stand-in for libcupti's NVTX entry point, for machines with no GPU: it asks
// NVTX's export table once, as CUPTI's InitializeInjectionNvtx2 does, and accepts.
// It has no Activity API, so the injection library's record says no_cupti while
// its NVTX forwarding is still exercised (tests/unit/inject/run_kernels_test.cpp).
#include <cstdint>

using GetExportTable = const void* (*)(std::uint32_t);

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    GetExportTable get_export_table) {
  if (get_export_table == nullptr) return 0;
  get_export_table(1);  // NVTX_ETID_CALLBACKS
  return 1;
}

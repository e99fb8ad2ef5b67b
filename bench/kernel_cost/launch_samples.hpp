// SPDX-License-Identifier: Apache-2.0
// The counting and timing half of launch_hook.cpp's library: the driver functions it
// calls itself, each thread's tally of launches, the timed launches' events, and
// the C entry points that read, reset and dump the tallies. launch_hook.cpp is the
// other half, the interposition that brings every launch here.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>

namespace launch_hook {

using DlsymFn = void* (*)(void*, const char*) noexcept;

inline DlsymFn real_dlsym() {
  static const DlsymFn fn = [] {
    for (const char* v : {"GLIBC_2.34", "GLIBC_2.2.5"}) {
      if (void* p = dlvsym(RTLD_NEXT, "dlsym", v)) return reinterpret_cast<DlsymFn>(p);
    }
    std::abort();
  }();
  return fn;
}

// The driver functions the sampled path calls, from libcuda itself.
// The driver functions the library calls itself, from libcuda itself.
struct Driver {
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventQuery) event_query = nullptr;
  decltype(&::cuEventElapsedTime) elapsed = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_current = nullptr;
  decltype(&::cuStreamIsCapturing) is_capturing = nullptr;
  decltype(&::cuStreamQuery) stream_query = nullptr;
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamWaitValue32) wait_value = nullptr;
  decltype(&::cuMemHostAlloc) host_alloc = nullptr;
  decltype(&::cuMemHostGetDevicePointer) host_device_ptr = nullptr;
  decltype(&::cuThreadExchangeStreamCaptureMode) exchange_mode = nullptr;
  decltype(&::cuFuncGetName) func_name = nullptr;
  decltype(&::cuKernelGetName) kernel_name = nullptr;
  void* launch_kernel = nullptr;  // for the PLT entry points
  void* launch_kernel_ptsz = nullptr;
  void* launch_kernel_ex = nullptr;
  void* launch_kernel_ex_ptsz = nullptr;
  void* graph_launch = nullptr;
  void* graph_launch_ptsz = nullptr;
};

const Driver& driver();

// A legacy-stream launch's null stream is the legacy stream; a per-thread one's is
// the thread's own.
inline CUstream stream_for(CUstream s, bool ptsz) {
  return (ptsz && s == nullptr) ? CU_STREAM_PER_THREAD : s;
}

struct Pending;

// Around each launch: counts it, and for a launch picked to be timed records the first
// event and returns the pair that after_launch closes (else null).
Pending* before_launch(const void* key, bool graph, CUstream stream);
void after_launch(Pending* p, CUstream stream, CUresult launched);

}  // namespace launch_hook

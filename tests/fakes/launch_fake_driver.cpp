// SPDX-License-Identifier: Apache-2.0
// A stand-in libcuda.so.1 for the launch hook's test (tests/e2e/launch_hook.sh): the
// entry points that bench/kernel_cost/launch_hook.cpp stands in front of, and the two
// that name a function, with the driver's calling conventions. Every launch that
// reaches it is counted, so the test can tell a launch the hook counted from one it
// also passed on. Written without cuda.h: the types are the driver's ABI (an int
// result, opaque handles, an unsigned 64-bit flag word).
//
// Built twice (tests/CMakeLists.txt). Linked with -Bsymbolic-functions, its
// cuGetProcAddress hands out its own functions, as the driver does. Linked without, it
// hands out whatever the process resolves their names to, which with the hook
// preloaded is the hook's own entry points: a shim in front of the driver can do that,
// and the hook must not take them for the real ones.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidHandle = 400;            // CUDA_ERROR_INVALID_HANDLE
constexpr int kNotFound = 500;                 // CUDA_ERROR_NOT_FOUND
constexpr std::uint64_t kPerThread = 1U << 1;  // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

std::atomic<std::uint64_t> g_received{0};

// Function handles are addresses inside this array: the first half are "CUfunction"s
// that cuFuncGetName names, the second half "CUkernel"s that only cuKernelGetName
// names (cudart launches those; the hook must fall back).
char g_functions[16];
char g_names[16][16];

int index_of(const void* f) {
  const auto* p = static_cast<const char*>(f);
  if (p < g_functions || p >= g_functions + sizeof g_functions) return -1;
  return static_cast<int>(p - g_functions);
}

const char* name_at(int i) {
  std::snprintf(g_names[i], sizeof g_names[i], "kernel_%d", i);
  return g_names[i];
}

}  // namespace

extern "C" {

// For the fake job: the handle of function i, and the launches this driver received.
void* fake_driver_function(int i) {
  return (i >= 0 && i < 16) ? &g_functions[i] : nullptr;
}
std::uint64_t fake_driver_received() {
  return g_received.load();
}

int cuFuncGetName(const char** name, void* f) {
  const int i = index_of(f);
  if (i < 0 || i >= 8) return kInvalidHandle;
  *name = name_at(i);
  return kSuccess;
}
int cuKernelGetName(const char** name, void* k) {
  const int i = index_of(k);
  if (i < 8) return kInvalidHandle;
  *name = name_at(i);
  return kSuccess;
}

// The _ptsz variants share these, not the exported names, as the driver's do: a call
// by name from inside would go to the hook in front and count twice.
static int launch(void* f) {
  if (index_of(f) < 0) return kInvalidHandle;
  ++g_received;
  return kSuccess;
}
static int graph_launch(void* graph) {
  if (graph == nullptr) return kInvalidHandle;
  ++g_received;
  return kSuccess;
}

int cuLaunchKernel(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   void*, void**, void**) {
  return launch(f);
}
int cuLaunchKernel_ptsz(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void*, void**, void**) {
  return launch(f);
}
int cuLaunchKernelEx(const void*, void* f, void**, void**) {
  return launch(f);
}
int cuLaunchKernelEx_ptsz(const void*, void* f, void**, void**) {
  return launch(f);
}
int cuGraphLaunch(void* graph, void*) {
  return graph_launch(graph);
}
int cuGraphLaunch_ptsz(void* graph, void*) {
  return graph_launch(graph);
}

// The driver hands out the per-thread-stream variant when the flags ask for it.
int cuGetProcAddress_v2(const char* symbol, void** pfn, int, std::uint64_t flags, int* status) {
  struct Entry {
    const char* name;
    void* legacy;
    void* per_thread;
  };
  static const Entry entries[] = {
      {"cuLaunchKernel", reinterpret_cast<void*>(&cuLaunchKernel),
       reinterpret_cast<void*>(&cuLaunchKernel_ptsz)},
      {"cuLaunchKernelEx", reinterpret_cast<void*>(&cuLaunchKernelEx),
       reinterpret_cast<void*>(&cuLaunchKernelEx_ptsz)},
      {"cuGraphLaunch", reinterpret_cast<void*>(&cuGraphLaunch),
       reinterpret_cast<void*>(&cuGraphLaunch_ptsz)},
      {"cuFuncGetName", reinterpret_cast<void*>(&cuFuncGetName),
       reinterpret_cast<void*>(&cuFuncGetName)},
      {"cuGetProcAddress", reinterpret_cast<void*>(&cuGetProcAddress_v2),
       reinterpret_cast<void*>(&cuGetProcAddress_v2)},
  };
  for (const Entry& e : entries) {
    if (std::strcmp(symbol, e.name) != 0) continue;
    *pfn = (flags & kPerThread) != 0 ? e.per_thread : e.legacy;
    if (status != nullptr) *status = 0;  // CU_GET_PROC_ADDRESS_SUCCESS
    return kSuccess;
  }
  *pfn = nullptr;
  if (status != nullptr) *status = 1;  // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
  return kNotFound;
}
int cuGetProcAddress(const char* symbol, void** pfn, int version, std::uint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

}  // extern "C"

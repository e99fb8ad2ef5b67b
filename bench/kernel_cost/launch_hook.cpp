// SPDX-License-Identifier: Apache-2.0
// Issue 51's experiment for a kernel view without CUPTI: count every kernel launch
// at the driver's entry points and time a random sample of them with a pair of CUDA
// events, from a library put in front of the job with LD_PRELOAD.
//
// How the launches are reached. cudart, cuBLAS (its own static cudart) and cuDNN fetch
// the driver's functions with cuGetProcAddress, which they get from dlsym on
// libcuda.so.1; Triton's launchers call cuLaunchKernel(Ex) through the PLT. So the
// library defines dlsym (answering only for cuGetProcAddress and the launch calls
// asked of a handle, everything else passed on as a sibling call, so that glibc still
// sees the caller's return address for RTLD_NEXT), cuGetProcAddress(_v2) (handing out
// a wrapper in place of each launch function) and the launch functions themselves.
//
// What a launch costs: a thread-local table keyed by CUfunction (its name looked up
// once per thread) and a countdown. When the countdown ends (its length drawn from a
// geometric distribution of mean LAUNCH_HOOK_SAMPLE, so that a training step's fixed
// sequence of kernels cannot alias with it), the launch is bracketed by two events
// from the thread's pool; finished pairs are read at the thread's next sampled launch.
// The thread's stream-capture mode is set to relaxed around those calls, so that a
// capture in global mode on another thread is not broken by them. A sampled launch
// into a stream under capture is counted but not timed.
//
//   LAUNCH_HOOK_SAMPLE   mean launches between timed ones (0: count only; default 0)
//   LAUNCH_HOOK_OUT      file for the JSON tally at exit (default: none)
//   LAUNCH_HOOK_GATE=1   hold the stream while a timed launch is queued: hangs jobs
//                        (bench/results/launch-hook-h200-2026-11-29), for gate_probe.sh
// C entry points for a harness in the same process: launch_hook_reset(),
// launch_hook_dump(path), launch_hook_launches(), launch_hook_set(mode, mean).
//
// This file is the interposition; launch_samples.cpp counts and times what it brings.
// Built by build_hook.sh.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string>

#include "launch_samples.hpp"

#undef cuGetProcAddress

namespace {

using launch_hook::after_launch;
using launch_hook::before_launch;
using launch_hook::DlsymFn;
using launch_hook::driver;
using launch_hook::Pending;
using launch_hook::real_dlsym;
using launch_hook::stream_for;

// The real functions behind each wrapper, as the job was given them.
std::atomic<void*> g_real_lk{nullptr}, g_real_lk_ptsz{nullptr}, g_real_lkex{nullptr},
    g_real_lkex_ptsz{nullptr}, g_real_gl{nullptr}, g_real_gl_ptsz{nullptr};

void* real_or(std::atomic<void*>& slot, void* fallback) {
  void* p = slot.load(std::memory_order_relaxed);
  return p ? p : fallback;
}

using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**);
using LaunchKernelExFn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
using GraphLaunchFn = CUresult (*)(CUgraphExec, CUstream);

template <bool Ptsz>
CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, CUstream s, void** params,
                       void** extra) {
  auto real =
      reinterpret_cast<LaunchKernelFn>(Ptsz ? real_or(g_real_lk_ptsz, driver().launch_kernel_ptsz)
                                            : real_or(g_real_lk, driver().launch_kernel));
  const CUstream st = stream_for(s, Ptsz);
  Pending* p = before_launch(f, false, st);
  const CUresult r = real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
  after_launch(p, st, r);
  return r;
}

template <bool Ptsz>
CUresult launch_kernel_ex(const CUlaunchConfig* c, CUfunction f, void** params, void** extra) {
  auto real = reinterpret_cast<LaunchKernelExFn>(
      Ptsz ? real_or(g_real_lkex_ptsz, driver().launch_kernel_ex_ptsz)
           : real_or(g_real_lkex, driver().launch_kernel_ex));
  const CUstream st = stream_for(c ? c->hStream : nullptr, Ptsz);
  Pending* p = before_launch(f, false, st);
  const CUresult r = real(c, f, params, extra);
  after_launch(p, st, r);
  return r;
}

template <bool Ptsz>
CUresult graph_launch(CUgraphExec g, CUstream s) {
  auto real =
      reinterpret_cast<GraphLaunchFn>(Ptsz ? real_or(g_real_gl_ptsz, driver().graph_launch_ptsz)
                                           : real_or(g_real_gl, driver().graph_launch));
  const CUstream st = stream_for(s, Ptsz);
  Pending* p = before_launch(g, true, st);
  const CUresult r = real(g, s);
  after_launch(p, st, r);
  return r;
}

}  // namespace

// This library's own entry points (defined below), for wrap() to know them.
extern "C" {
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig*, CUfunction, void**, void**);
CUresult cuGraphLaunch_ptsz(CUgraphExec, CUstream);
}

namespace {

template <class F>
void* address(F* f) {
  return reinterpret_cast<void*>(f);
}

// Replaces *pfn, just handed out for `symbol`, by its wrapper when it is a launch call.
void wrap(const char* symbol, void** pfn, bool ptsz) {
  if (pfn == nullptr || *pfn == nullptr || std::strncmp(symbol, "cu", 2) != 0) return;
  struct Hook {
    const char* name;
    std::atomic<void*>* real;
    void* legacy;
    void* per_thread;
    // Ours too: a driver (or a shim in front of it) whose cuGetProcAddress hands out
    // its launch calls as the process resolves their names gives back these. Taken
    // for the real function, the wrapper would call itself without end.
    void* exported_legacy;
    void* exported_per_thread;
  };
  static const Hook hooks[] = {
      {"cuLaunchKernel", &g_real_lk, address(&launch_kernel<false>), address(&launch_kernel<true>),
       address(&::cuLaunchKernel), address(&::cuLaunchKernel_ptsz)},
      {"cuLaunchKernelEx", &g_real_lkex, address(&launch_kernel_ex<false>),
       address(&launch_kernel_ex<true>), address(&::cuLaunchKernelEx),
       address(&::cuLaunchKernelEx_ptsz)},
      {"cuGraphLaunch", &g_real_gl, address(&graph_launch<false>), address(&graph_launch<true>),
       address(&::cuGraphLaunch), address(&::cuGraphLaunch_ptsz)},
  };
  std::string base = symbol;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, "_ptsz") == 0) {
    base.resize(base.size() - 5);
    ptsz = true;
  }
  for (const Hook& h : hooks) {
    if (base != h.name) continue;
    std::atomic<void*>* slot = h.real;
    if (ptsz) {
      slot = slot == &g_real_lk     ? &g_real_lk_ptsz
             : slot == &g_real_lkex ? &g_real_lkex_ptsz
                                    : &g_real_gl_ptsz;
    }
    if (*pfn == h.exported_legacy || *pfn == h.exported_per_thread) {
      *pfn = ptsz ? h.per_thread : h.legacy;  // ours; the real one is the driver's own
      return;
    }
    if (*pfn == h.legacy || *pfn == h.per_thread) return;  // already ours
    slot->store(*pfn);
    *pfn = ptsz ? h.per_thread : h.legacy;
    return;
  }
}

using GetProcV2Fn = CUresult (*)(const char*, void**, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult*);
using GetProcV1Fn = CUresult (*)(const char*, void**, int, cuuint64_t);
std::atomic<void*> g_real_gpa_v2{nullptr}, g_real_gpa_v1{nullptr};

// The driver's own cuGetProcAddress(_v2), for a caller that reached ours through the
// PLT before any dlsym on libcuda told us the driver's.
void* real_get_proc(std::atomic<void*>& slot, const char* name) {
  void* r = slot.load();
  if (r == nullptr) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW);
    r = h ? real_dlsym()(h, name) : nullptr;
    if (r != nullptr) slot.store(r);
  }
  return r;
}

DlsymFn g_dlsym = nullptr;  // set by the constructor; read without a guard
__attribute__((constructor)) void find_dlsym() {
  g_dlsym = real_dlsym();
}

bool is_per_thread(cuuint64_t flags) {
  return (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int version, cuuint64_t flags,
    CUdriverProcAddressQueryResult* status);
__attribute__((visibility("default"))) CUresult cuGetProcAddress(const char* symbol, void** pfn,
                                                                 int version, cuuint64_t flags);

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  void* r = real_get_proc(g_real_gpa_v2, "cuGetProcAddress_v2");
  if (r == nullptr) return CUDA_ERROR_NOT_FOUND;
  const CUresult res = reinterpret_cast<GetProcV2Fn>(r)(symbol, pfn, version, flags, status);
  if (res == CUDA_SUCCESS && symbol != nullptr) {
    if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
      const bool ours = pfn && (*pfn == reinterpret_cast<void*>(&cuGetProcAddress_v2) ||
                                *pfn == reinterpret_cast<void*>(&cuGetProcAddress));
      if (pfn && *pfn) {
        // Asked for itself: the caller may call it with the v1 or v2 ABI, by version.
        // A driver that hands out its functions as the process resolves their names
        // gives back ours (wrap() has why): the real one is then the one we have.
        if (version >= 12000) {
          if (!ours) g_real_gpa_v2.store(*pfn);
          *pfn = reinterpret_cast<void*>(&cuGetProcAddress_v2);
        } else {
          if (!ours) g_real_gpa_v1.store(*pfn);
          *pfn = reinterpret_cast<void*>(&cuGetProcAddress);
        }
      }
    } else {
      wrap(symbol, pfn, is_per_thread(flags));
    }
  }
  return res;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  void* r = real_get_proc(g_real_gpa_v1, "cuGetProcAddress");
  if (r == nullptr) return CUDA_ERROR_NOT_FOUND;
  const CUresult res = reinterpret_cast<GetProcV1Fn>(r)(symbol, pfn, version, flags);
  if (res == CUDA_SUCCESS && symbol != nullptr) wrap(symbol, pfn, is_per_thread(flags));
  return res;
}

// The PLT entry points (Triton's launchers, programs linked with -lcuda).
__attribute__((visibility("default"))) CUresult cuLaunchKernel(
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
    unsigned shmem, CUstream s, void** params, void** extra) {
  return launch_kernel<false>(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
__attribute__((visibility("default"))) CUresult cuLaunchKernel_ptsz(
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
    unsigned shmem, CUstream s, void** params, void** extra) {
  return launch_kernel<true>(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
__attribute__((visibility("default"))) CUresult cuLaunchKernelEx(const CUlaunchConfig* c,
                                                                 CUfunction f, void** params,
                                                                 void** extra) {
  return launch_kernel_ex<false>(c, f, params, extra);
}
__attribute__((visibility("default"))) CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* c,
                                                                      CUfunction f, void** params,
                                                                      void** extra) {
  return launch_kernel_ex<true>(c, f, params, extra);
}
__attribute__((visibility("default"))) CUresult cuGraphLaunch(CUgraphExec g, CUstream s) {
  return graph_launch<false>(g, s);
}
__attribute__((visibility("default"))) CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s) {
  return graph_launch<true>(g, s);
}

// Slow path of dlsym: the handle's own launch calls and cuGetProcAddress, wrapped.
static __attribute__((noinline)) void* hooked_dlsym(void* handle, const char* name) noexcept {
  if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && name[0] == 'c' && name[1] == 'u') {
    if (std::strcmp(name, "cuGetProcAddress_v2") == 0) {
      if (void* r = real_dlsym()(handle, name)) {
        g_real_gpa_v2.store(r);
        return reinterpret_cast<void*>(&cuGetProcAddress_v2);
      }
      return nullptr;
    }
    if (std::strcmp(name, "cuGetProcAddress") == 0) {
      if (void* r = real_dlsym()(handle, name)) {
        g_real_gpa_v1.store(r);
        return reinterpret_cast<void*>(&cuGetProcAddress);
      }
      return nullptr;
    }
    void* r = real_dlsym()(handle, name);
    wrap(name, &r, false);
    return r;
  }
  // Only before this library's constructor ran: RTLD_NEXT then resolves from here.
  return real_dlsym()(handle, name);
}

// Everything not ours leaves as a sibling call (a jmp, checked in hook_run.sh with
// objdump), so that glibc's dlsym sees the caller's return address, which RTLD_NEXT
// resolves from.
__attribute__((visibility("default"))) void* dlsym(void* __restrict handle,
                                                   const char* __restrict name) noexcept {
  const DlsymFn real = g_dlsym;
  if (real != nullptr &&
      (handle == RTLD_NEXT || handle == RTLD_DEFAULT || name[0] != 'c' || name[1] != 'u')) {
    return real(handle, name);
  }
  return hooked_dlsym(handle, name);
}

}  // extern "C"

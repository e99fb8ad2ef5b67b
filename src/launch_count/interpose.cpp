// SPDX-License-Identifier: Apache-2.0
// How the counting library reaches every kernel launch of a job it is preloaded
// into (LD_PRELOAD), without CUPTI and without the driver's callbacks.
//
// cudart, cuBLAS (its own static cudart) and cuDNN fetch the driver's functions with
// cuGetProcAddress, which they get from dlsym on libcuda.so.1; Triton's launchers and
// programs linked with -lcuda call cuLaunchKernel(Ex) through the PLT. So the library
// defines dlsym (answering itself only for cuGetProcAddress and the launch calls asked
// of a handle, and passing everything else on as a sibling call, so that glibc still
// sees the caller's return address for RTLD_NEXT), cuGetProcAddress(_v2) (handing out
// a counting wrapper in place of each launch function) and the launch functions.
// A wrapper counts (counts.hpp) and calls the driver's function: nothing else runs on
// the launch's path. Measured on an H200 as bench/kernel_cost/launch_hook.cpp's counting
// mode (docs/kernels.md, "Launch counts").
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string_view>

#include "launch_count/counts.hpp"
#include "launch_count/driver_lookup.hpp"
#include "launch_count/record_writer.hpp"

namespace lc = gpulens::launch_count;
namespace cu = gpulens::launch_count::cu;

namespace {

// The driver's functions behind each wrapper, as the job was given them.
std::atomic<void*> g_real_lk{nullptr}, g_real_lk_ptsz{nullptr}, g_real_lkex{nullptr},
    g_real_lkex_ptsz{nullptr}, g_real_gl{nullptr}, g_real_gl_ptsz{nullptr};

// The function handed out for a launch call, else (a call through the PLT, which no
// lookup preceded) the driver's own; the driver is asked only then.
template <class F>
F real_or(std::atomic<void*>& slot, F lc::Driver::*fallback) {
  void* p = slot.load(std::memory_order_relaxed);
  return p != nullptr ? reinterpret_cast<F>(p) : lc::driver().*fallback;
}

inline void count(const void* key, bool graph) {
  lc::note_launch();
  lc::count_launch(key, graph);
}

template <bool Ptsz>
cu::Result launch_kernel(cu::Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned shmem, cu::Stream s, void** params,
                         void** extra) {
  const auto real = Ptsz ? real_or(g_real_lk_ptsz, &lc::Driver::launch_kernel_ptsz)
                         : real_or(g_real_lk, &lc::Driver::launch_kernel);
  if (real == nullptr) return cu::kNotFound;
  if (lc::counting_on()) count(f, false);
  return real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

template <bool Ptsz>
cu::Result launch_kernel_ex(const cu::LaunchConfig* c, cu::Function f, void** params,
                            void** extra) {
  const auto real = Ptsz ? real_or(g_real_lkex_ptsz, &lc::Driver::launch_kernel_ex_ptsz)
                         : real_or(g_real_lkex, &lc::Driver::launch_kernel_ex);
  if (real == nullptr) return cu::kNotFound;
  if (lc::counting_on()) count(f, false);
  return real(c, f, params, extra);
}

template <bool Ptsz>
cu::Result graph_launch(cu::GraphExec g, cu::Stream s) {
  const auto real = Ptsz ? real_or(g_real_gl_ptsz, &lc::Driver::graph_launch_ptsz)
                         : real_or(g_real_gl, &lc::Driver::graph_launch);
  if (real == nullptr) return cu::kNotFound;
  if (lc::counting_on()) count(g, true);
  return real(g, s);
}

}  // namespace

// This library's own entry points (defined below), for wrap() to know them.
extern "C" {
cu::Result cuLaunchKernel(cu::Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                          unsigned, cu::Stream, void**, void**);
cu::Result cuLaunchKernel_ptsz(cu::Function, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, cu::Stream, void**, void**);
cu::Result cuLaunchKernelEx(const cu::LaunchConfig*, cu::Function, void**, void**);
cu::Result cuLaunchKernelEx_ptsz(const cu::LaunchConfig*, cu::Function, void**, void**);
cu::Result cuGraphLaunch(cu::GraphExec, cu::Stream);
cu::Result cuGraphLaunch_ptsz(cu::GraphExec, cu::Stream);
cu::Result cuGetProcAddress_v2(const char*, void**, int, std::uint64_t, cu::ProcStatus*);
cu::Result cuGetProcAddress(const char*, void**, int, std::uint64_t);
}

namespace {

template <class F>
void* address(F* f) {
  return reinterpret_cast<void*>(f);
}

struct Hook {
  std::string_view name;
  std::atomic<void*>* real;
  std::atomic<void*>* real_ptsz;
  void* wrapper;
  void* wrapper_ptsz;
  // Ours too: a driver (or a shim in front of it) whose cuGetProcAddress hands out its
  // launch calls as the process resolves their names gives back these. Taken for the
  // driver's, the wrapper would call itself without end (tests/e2e/launch_count.sh).
  void* exported;
  void* exported_ptsz;
};

const Hook* hook_for(std::string_view base) {
  static const Hook hooks[] = {
      {"cuLaunchKernel", &g_real_lk, &g_real_lk_ptsz, address(&launch_kernel<false>),
       address(&launch_kernel<true>), address(&::cuLaunchKernel), address(&::cuLaunchKernel_ptsz)},
      {"cuLaunchKernelEx", &g_real_lkex, &g_real_lkex_ptsz, address(&launch_kernel_ex<false>),
       address(&launch_kernel_ex<true>), address(&::cuLaunchKernelEx),
       address(&::cuLaunchKernelEx_ptsz)},
      {"cuGraphLaunch", &g_real_gl, &g_real_gl_ptsz, address(&graph_launch<false>),
       address(&graph_launch<true>), address(&::cuGraphLaunch), address(&::cuGraphLaunch_ptsz)},
  };
  for (const Hook& h : hooks) {
    if (h.name == base) return &h;
  }
  return nullptr;
}

// Replaces *pfn, just handed out for `symbol`, by its wrapper when it is a launch call.
void wrap(const char* symbol, void** pfn, bool ptsz) {
  if (!lc::counting_on() || pfn == nullptr || *pfn == nullptr ||
      std::strncmp(symbol, "cu", 2) != 0) {
    return;
  }
  std::string_view base = symbol;
  if (base.ends_with("_ptsz")) {
    base.remove_suffix(5);
    ptsz = true;
  }
  const Hook* h = hook_for(base);
  if (h == nullptr) return;
  void* const wrapper = ptsz ? h->wrapper_ptsz : h->wrapper;
  if (*pfn == h->exported || *pfn == h->exported_ptsz) {
    *pfn = wrapper;  // ours; the real one is the driver's own (driver_lookup.hpp)
    return;
  }
  if (*pfn == h->wrapper || *pfn == h->wrapper_ptsz) return;  // already ours
  (ptsz ? h->real_ptsz : h->real)->store(*pfn);
  *pfn = wrapper;
}

std::atomic<void*> g_real_gpa_v2{nullptr}, g_real_gpa_v1{nullptr};

// The driver's own cuGetProcAddress(_v2), for a caller that reached ours through the
// PLT before any dlsym on libcuda told us the driver's.
void* real_get_proc(std::atomic<void*>& slot, const char* name) {
  void* r = slot.load();
  if (r == nullptr) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW);
    r = h != nullptr ? lc::real_dlsym()(h, name) : nullptr;
    if (r != nullptr) slot.store(r);
  }
  return r;
}

lc::DlsymFn g_dlsym = nullptr;  // set by the constructor; read without a guard
__attribute__((constructor)) void find_dlsym() {
  g_dlsym = lc::real_dlsym();
}

bool is_per_thread(std::uint64_t flags) {
  return (flags & cu::kPerThreadStream) != 0;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) cu::Result cuGetProcAddress_v2(const char* symbol,
                                                                      void** pfn, int version,
                                                                      std::uint64_t flags,
                                                                      cu::ProcStatus* status) {
  void* r = real_get_proc(g_real_gpa_v2, "cuGetProcAddress_v2");
  if (r == nullptr) return cu::kNotFound;
  const cu::Result res = reinterpret_cast<cu::GetProcV2Fn>(r)(symbol, pfn, version, flags, status);
  if (res != cu::kSuccess || symbol == nullptr || pfn == nullptr || *pfn == nullptr) return res;
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    // Asked for itself: the caller may call it with the v1 or v2 ABI, by version. A
    // driver that hands out its functions as the process resolves their names gives
    // back ours (Hook has why): the real one is then the one we have.
    const bool ours = *pfn == address(&cuGetProcAddress_v2) || *pfn == address(&cuGetProcAddress);
    if (version >= cu::kGetProcV2Version) {
      if (!ours) g_real_gpa_v2.store(*pfn);
      *pfn = address(&cuGetProcAddress_v2);
    } else {
      if (!ours) g_real_gpa_v1.store(*pfn);
      *pfn = address(&cuGetProcAddress);
    }
  } else {
    wrap(symbol, pfn, is_per_thread(flags));
  }
  return res;
}

__attribute__((visibility("default"))) cu::Result cuGetProcAddress(const char* symbol, void** pfn,
                                                                   int version,
                                                                   std::uint64_t flags) {
  void* r = real_get_proc(g_real_gpa_v1, "cuGetProcAddress");
  if (r == nullptr) return cu::kNotFound;
  const cu::Result res = reinterpret_cast<cu::GetProcV1Fn>(r)(symbol, pfn, version, flags);
  if (res == cu::kSuccess && symbol != nullptr) wrap(symbol, pfn, is_per_thread(flags));
  return res;
}

// The PLT entry points (Triton's launchers, programs linked with -lcuda).
__attribute__((visibility("default"))) cu::Result cuLaunchKernel(
    cu::Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
    unsigned shmem, cu::Stream s, void** params, void** extra) {
  return launch_kernel<false>(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
__attribute__((visibility("default"))) cu::Result cuLaunchKernel_ptsz(
    cu::Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
    unsigned shmem, cu::Stream s, void** params, void** extra) {
  return launch_kernel<true>(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
__attribute__((visibility("default"))) cu::Result cuLaunchKernelEx(const cu::LaunchConfig* c,
                                                                   cu::Function f, void** params,
                                                                   void** extra) {
  return launch_kernel_ex<false>(c, f, params, extra);
}
__attribute__((visibility("default"))) cu::Result cuLaunchKernelEx_ptsz(const cu::LaunchConfig* c,
                                                                        cu::Function f,
                                                                        void** params,
                                                                        void** extra) {
  return launch_kernel_ex<true>(c, f, params, extra);
}
__attribute__((visibility("default"))) cu::Result cuGraphLaunch(cu::GraphExec g, cu::Stream s) {
  return graph_launch<false>(g, s);
}
__attribute__((visibility("default"))) cu::Result cuGraphLaunch_ptsz(cu::GraphExec g,
                                                                     cu::Stream s) {
  return graph_launch<true>(g, s);
}

// Slow path of dlsym: a handle's own launch calls and cuGetProcAddress, wrapped.
static __attribute__((noinline)) void* hooked_dlsym(void* handle, const char* name) noexcept {
  if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && name[0] == 'c' && name[1] == 'u') {
    if (std::strcmp(name, "cuGetProcAddress_v2") == 0 ||
        std::strcmp(name, "cuGetProcAddress") == 0) {
      const bool v2 = name[16] == '_';
      void* r = lc::real_dlsym()(handle, name);
      if (r == nullptr) return nullptr;
      (v2 ? g_real_gpa_v2 : g_real_gpa_v1).store(r);
      return v2 ? address(&cuGetProcAddress_v2) : address(&cuGetProcAddress);
    }
    void* r = lc::real_dlsym()(handle, name);
    wrap(name, &r, false);
    return r;
  }
  // Only before this library's constructor ran: RTLD_NEXT then resolves from here.
  return lc::real_dlsym()(handle, name);
}

// Everything not ours leaves as a sibling call (a jmp, checked by
// src/launch_count/jump_check.cmake at build time), so that glibc's dlsym sees the
// caller's return address, which RTLD_NEXT resolves from.
__attribute__((visibility("default"))) void* dlsym(void* __restrict handle,
                                                   const char* __restrict name) noexcept {
  const lc::DlsymFn real = g_dlsym;
  if (real != nullptr &&
      (handle == RTLD_NEXT || handle == RTLD_DEFAULT || name[0] != 'c' || name[1] != 'u')) {
    return real(handle, name);
  }
  return hooked_dlsym(handle, name);
}

}  // extern "C"

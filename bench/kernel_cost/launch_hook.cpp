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
// C entry points for a harness in the same process: launch_hook_reset(),
// launch_hook_dump(path), launch_hook_launches().
#include <cuda.h>
#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "launch_tally.hpp"

#undef cuGetProcAddress

namespace {

using DlsymFn = void* (*)(void*, const char*) noexcept;

DlsymFn real_dlsym() {
  static const DlsymFn fn = [] {
    for (const char* v : {"GLIBC_2.34", "GLIBC_2.2.5"}) {
      if (void* p = dlvsym(RTLD_NEXT, "dlsym", v)) return reinterpret_cast<DlsymFn>(p);
    }
    std::abort();
  }();
  return fn;
}

// The driver functions the sampled path calls, from libcuda itself.
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

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h == nullptr) h = dlopen("libcuda.so.1", RTLD_NOW);
    auto get = [&](const char* n) { return h ? real_dlsym()(h, n) : nullptr; };
    x.event_create = reinterpret_cast<decltype(x.event_create)>(get("cuEventCreate"));
    x.event_record = reinterpret_cast<decltype(x.event_record)>(get("cuEventRecord"));
    x.event_query = reinterpret_cast<decltype(x.event_query)>(get("cuEventQuery"));
    x.elapsed = reinterpret_cast<decltype(x.elapsed)>(get("cuEventElapsedTime_v2"));
    if (x.elapsed == nullptr)
      x.elapsed = reinterpret_cast<decltype(x.elapsed)>(get("cuEventElapsedTime"));
    x.ctx_current = reinterpret_cast<decltype(x.ctx_current)>(get("cuCtxGetCurrent"));
    x.is_capturing = reinterpret_cast<decltype(x.is_capturing)>(get("cuStreamIsCapturing"));
    x.stream_query = reinterpret_cast<decltype(x.stream_query)>(get("cuStreamQuery"));
    x.stream_create = reinterpret_cast<decltype(x.stream_create)>(get("cuStreamCreate"));
    x.wait_value = reinterpret_cast<decltype(x.wait_value)>(get("cuStreamWaitValue32_v2"));
    x.host_alloc = reinterpret_cast<decltype(x.host_alloc)>(get("cuMemHostAlloc"));
    x.host_device_ptr =
        reinterpret_cast<decltype(x.host_device_ptr)>(get("cuMemHostGetDevicePointer_v2"));
    x.exchange_mode =
        reinterpret_cast<decltype(x.exchange_mode)>(get("cuThreadExchangeStreamCaptureMode"));
    x.func_name = reinterpret_cast<decltype(x.func_name)>(get("cuFuncGetName"));
    x.kernel_name = reinterpret_cast<decltype(x.kernel_name)>(get("cuKernelGetName"));
    x.launch_kernel = get("cuLaunchKernel");
    x.launch_kernel_ptsz = get("cuLaunchKernel_ptsz");
    x.launch_kernel_ex = get("cuLaunchKernelEx");
    x.launch_kernel_ex_ptsz = get("cuLaunchKernelEx_ptsz");
    x.graph_launch = get("cuGraphLaunch");
    x.graph_launch_ptsz = get("cuGraphLaunch_ptsz");
    return x;
  }();
  return d;
}

// What a launch does: 0 pass it on, 1 count it, 2 count it and time a sample.
// Settable from the harness (launch_hook_set) for paired slots in one process.
std::atomic<int> g_mode{-1};
std::atomic<long> g_sample_mean{0};

long sample_mean() {
  return g_sample_mean.load(std::memory_order_relaxed);
}

// LAUNCH_HOOK_GATE=1: hold the stream at a wait on a host word while the timed
// launch's first event, the launch and its second event are queued, then release it,
// so that the first event cannot complete before the kernel is queued behind it (on
// an idle stream it otherwise completes at once and the pair holds the host's time to
// submit the launch).
bool gate_on() {
  static const bool on = [] {
    const char* s = std::getenv("LAUNCH_HOOK_GATE");
    return s != nullptr && s[0] == '1';
  }();
  return on;
}

int mode() {
  int m = g_mode.load(std::memory_order_relaxed);
  if (m < 0) {
    const char* s = std::getenv("LAUNCH_HOOK_SAMPLE");
    const long n = s ? std::atol(s) : 0L;
    g_sample_mean.store(n);
    m = n > 0 ? 2 : 1;
    g_mode.store(m);
  }
  return m;
}

using launch_tally::bump;
using launch_tally::Entry;

struct Pending {
  CUevent start = nullptr;
  CUevent stop = nullptr;
  // Recorded on the thread's own idle stream just before `start`: it completes when the
  // GPU reaches it, the host's clock at `ref_host_ns` plus the GPU's latency, the same
  // latency a launch submitted at `submitted_host_ns` meets on its way.
  CUevent ref = nullptr;
  int64_t ref_host_ns = 0;
  int64_t submitted_host_ns = 0;
  bool ref_recorded = false;
  Entry* entry = nullptr;
  bool busy = false;
  bool stream_busy = false;
  bool gated = false;  // the stream waits on the thread's gate word until after_launch
};

constexpr size_t kSlots = 4096;  // distinct functions a thread can tell apart
constexpr size_t kPairs = 32;    // timed launches in flight per thread

struct Tally {
  launch_tally::Table<kSlots> table;
  std::atomic<uint64_t> other{0};  // launches of functions past kSlots
  std::atomic<uint64_t> captured{0};
  std::atomic<uint64_t> skipped{0};  // samples dropped: no free pair, other context
  std::array<Pending, kPairs> pairs;
  size_t head = 0;  // oldest pair in flight
  size_t in_flight = 0;
  CUcontext ctx = nullptr;
  CUstream own = nullptr;                  // idle but for the reference events
  volatile uint32_t* gate_host = nullptr;  // pinned, mapped: the stream's wait reads it
  CUdeviceptr gate_dev = 0;
  uint32_t gate_seq = 0;
  launch_tally::Countdown countdown{0};
};

std::mutex g_tallies_mutex;
std::vector<Tally*>& tallies() {
  static auto* v = new std::vector<Tally*>;  // never freed: read at exit
  return *v;
}

Tally& tally() {
  thread_local Tally* t = [] {
    auto* n = new Tally;  // outlives its thread, so that the dump at exit sees it
    n->countdown = launch_tally::Countdown(reinterpret_cast<uintptr_t>(n));
    std::lock_guard lock(g_tallies_mutex);
    tallies().push_back(n);
    return n;
  }();
  return *t;
}

std::string name_of(const void* key, bool graph) {
  if (graph) {
    char b[48];
    std::snprintf(b, sizeof b, "cudaGraph@%p", key);
    return b;
  }
  // cudart (CUDA 12 and later) launches CUkernel handles, which cuFuncGetName refuses.
  const char* raw = nullptr;
  void* k = const_cast<void*>(key);
  const Driver& d = driver();
  if ((d.func_name == nullptr || d.func_name(&raw, static_cast<CUfunction>(k)) != CUDA_SUCCESS ||
       !raw) &&
      (d.kernel_name == nullptr || d.kernel_name(&raw, static_cast<CUkernel>(k)) != CUDA_SUCCESS ||
       !raw)) {
    return "?";
  }
  int status = 0;
  char* demangled = abi::__cxa_demangle(raw, nullptr, nullptr, &status);
  std::string out = (status == 0 && demangled) ? demangled : raw;
  std::free(demangled);
  return out;
}

int64_t host_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

CUstream stream_for(CUstream s, bool ptsz) {
  return (ptsz && s == nullptr) ? CU_STREAM_PER_THREAD : s;
}

// Reads finished pairs, oldest first; stops at the first unfinished one.
void reap(Tally& t) {
  const Driver& d = driver();
  while (t.in_flight > 0) {
    Pending& p = t.pairs[t.head];
    const CUresult q = d.event_query(p.stop);
    if (q == CUDA_ERROR_NOT_READY) return;
    float ms = 0;
    if (q == CUDA_SUCCESS && d.elapsed(&ms, p.start, p.stop) == CUDA_SUCCESS && ms >= 0) {
      bump(p.entry->samples);
      bump(p.entry->sampled_ns, static_cast<uint64_t>(ms * 1e6));
      if (p.stream_busy) {
        bump(p.entry->busy_samples);
        bump(p.entry->busy_ns, static_cast<uint64_t>(ms * 1e6));
      }
      // On the reference's clock: the kernel starts no earlier than the first event
      // and no earlier than its own submission reached the GPU. The GPU's latency is in
      // the reference and in the submission alike, so it cancels.
      float e0 = 0, e1 = 0;
      if (p.ref_recorded && d.elapsed(&e0, p.ref, p.start) == CUDA_SUCCESS &&
          d.elapsed(&e1, p.ref, p.stop) == CUDA_SUCCESS) {
        const double submitted_ms = static_cast<double>(p.submitted_host_ns - p.ref_host_ns) / 1e6;
        const double dur_ms =
            static_cast<double>(e1) - std::max(static_cast<double>(e0), submitted_ms);
        bump(p.entry->mapped_samples);
        bump(p.entry->mapped_ns, static_cast<uint64_t>(std::max(0.0, dur_ms) * 1e6));
      }
    }
    p.busy = false;
    t.head = (t.head + 1) % kPairs;
    --t.in_flight;
  }
}

// Called before a launch; returns the pair to close after it, or null.
Pending* before_launch(const void* key, bool graph, CUstream stream) {
  const int m = mode();
  if (m == 0) return nullptr;
  Tally& t = tally();
  Entry* e = t.table.find(key, graph, name_of);
  if (e == nullptr) {
    bump(t.other);
    return nullptr;
  }
  bump(e->launches);
  if (m < 2 || !t.countdown.tick(sample_mean())) return nullptr;
  const Driver& d = driver();
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  d.exchange_mode(&mode);
  Pending* out = nullptr;
  CUcontext ctx = nullptr;
  CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
  if (d.ctx_current(&ctx) != CUDA_SUCCESS || ctx == nullptr) {
    bump(t.skipped);
  } else if (d.is_capturing(stream, &cap) != CUDA_SUCCESS || cap != CU_STREAM_CAPTURE_STATUS_NONE) {
    bump(t.captured);
  } else {
    if (t.ctx != ctx) {
      if (t.ctx == nullptr) {
        t.ctx = ctx;
        for (auto& p : t.pairs) {
          d.event_create(&p.start, CU_EVENT_DEFAULT);
          d.event_create(&p.stop, CU_EVENT_DEFAULT);
          d.event_create(&p.ref, CU_EVENT_DEFAULT);
        }
        if (d.stream_create(&t.own, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) t.own = nullptr;
        void* host = nullptr;
        if (gate_on() &&
            d.host_alloc(&host, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) ==
                CUDA_SUCCESS &&
            d.host_device_ptr(&t.gate_dev, host, 0) == CUDA_SUCCESS) {
          t.gate_host = static_cast<volatile uint32_t*>(host);
          *t.gate_host = 0;
        }
      }
    }
    if (t.ctx != ctx) {
      bump(t.skipped);  // a second context on this thread: not timed in this experiment
    } else {
      reap(t);
      if (t.in_flight == kPairs) {
        bump(t.skipped);
      } else {
        Pending& p = t.pairs[(t.head + t.in_flight) % kPairs];
        p.stream_busy = d.stream_query(stream) == CUDA_ERROR_NOT_READY;
        p.gated = t.gate_host != nullptr && d.wait_value(stream, t.gate_dev, t.gate_seq + 1,
                                                         CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS;
        if (p.gated) ++t.gate_seq;
        p.ref_host_ns = host_ns();
        p.ref_recorded = t.own != nullptr && d.event_record(p.ref, t.own) == CUDA_SUCCESS;
        if (d.event_record(p.start, stream) == CUDA_SUCCESS) {
          p.entry = e;
          p.busy = true;
          out = &p;
        } else if (p.gated) {
          __atomic_store_n(t.gate_host, t.gate_seq, __ATOMIC_SEQ_CST);
          p.gated = false;
        }
      }
    }
  }
  d.exchange_mode(&mode);
  return out;
}

void after_launch(Pending* p, CUstream stream, CUresult launched) {
  if (p == nullptr) return;
  p->submitted_host_ns = host_ns();
  Tally& t = tally();
  const Driver& d = driver();
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  d.exchange_mode(&mode);
  if (launched == CUDA_SUCCESS && d.event_record(p->stop, stream) == CUDA_SUCCESS) {
    ++t.in_flight;
  } else {
    p->busy = false;
  }
  if (p->gated) {  // whatever happened, the stream must go on
    __atomic_store_n(t.gate_host, t.gate_seq, __ATOMIC_SEQ_CST);
    p->gated = false;
  }
  d.exchange_mode(&mode);
}

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

// Replaces *pfn, just handed out for `symbol`, by its wrapper when it is a launch call.
void wrap(const char* symbol, void** pfn, bool ptsz) {
  if (pfn == nullptr || *pfn == nullptr || std::strncmp(symbol, "cu", 2) != 0) return;
  struct Hook {
    const char* name;
    std::atomic<void*>* real;
    void* legacy;
    void* per_thread;
  };
  static const Hook hooks[] = {
      {"cuLaunchKernel", &g_real_lk, reinterpret_cast<void*>(&launch_kernel<false>),
       reinterpret_cast<void*>(&launch_kernel<true>)},
      {"cuLaunchKernelEx", &g_real_lkex, reinterpret_cast<void*>(&launch_kernel_ex<false>),
       reinterpret_cast<void*>(&launch_kernel_ex<true>)},
      {"cuGraphLaunch", &g_real_gl, reinterpret_cast<void*>(&graph_launch<false>),
       reinterpret_cast<void*>(&graph_launch<true>)},
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
  void* r = g_real_gpa_v2.load();
  if (r == nullptr) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW);
    r = h ? real_dlsym()(h, "cuGetProcAddress_v2") : nullptr;
    if (r == nullptr) return CUDA_ERROR_NOT_FOUND;
    g_real_gpa_v2.store(r);
  }
  const CUresult res = reinterpret_cast<GetProcV2Fn>(r)(symbol, pfn, version, flags, status);
  if (res == CUDA_SUCCESS && symbol != nullptr) {
    if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
      if (pfn && *pfn) {
        // Asked for itself: the caller may call it with the v1 or v2 ABI, by version.
        if (version >= 12000) {
          g_real_gpa_v2.store(*pfn);
          *pfn = reinterpret_cast<void*>(&cuGetProcAddress_v2);
        } else {
          g_real_gpa_v1.store(*pfn);
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
  void* r = g_real_gpa_v1.load();
  if (r == nullptr) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW);
    r = h ? real_dlsym()(h, "cuGetProcAddress") : nullptr;
    if (r == nullptr) return CUDA_ERROR_NOT_FOUND;
    g_real_gpa_v1.store(r);
  }
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

// MODE 0 pass launches on, 1 count them, 2 count and time 1 in SAMPLE_MEAN.
__attribute__((visibility("default"))) void launch_hook_set(int mode, long sample_mean) {
  g_sample_mean.store(sample_mean);
  g_mode.store(mode);
}

// The driver's own cuLaunchKernel, for a harness comparing it with the wrapper.
__attribute__((visibility("default"))) void* launch_hook_real_launch() {
  return driver().launch_kernel;
}

__attribute__((visibility("default"))) unsigned long long launch_hook_launches() {
  std::lock_guard lock(g_tallies_mutex);
  unsigned long long n = 0;
  for (Tally* t : tallies()) {
    for (const Entry& e : t->table.slots()) n += e.launches.load(std::memory_order_relaxed);
    n += t->other.load(std::memory_order_relaxed);
  }
  return n;
}

__attribute__((visibility("default"))) void launch_hook_reset() {
  std::lock_guard lock(g_tallies_mutex);
  for (Tally* t : tallies()) {
    for (Entry& e : t->table.slots()) {
      e.launches.store(0, std::memory_order_relaxed);
      e.samples.store(0, std::memory_order_relaxed);
      e.sampled_ns.store(0, std::memory_order_relaxed);
      e.busy_samples.store(0, std::memory_order_relaxed);
      e.busy_ns.store(0, std::memory_order_relaxed);
      e.mapped_samples.store(0, std::memory_order_relaxed);
      e.mapped_ns.store(0, std::memory_order_relaxed);
    }
    t->other.store(0);
    t->captured.store(0);
    t->skipped.store(0);
  }
}

__attribute__((visibility("default"))) int launch_hook_dump(const char* path) {
  struct Sum {
    uint64_t launches = 0, samples = 0, ns = 0, busy_samples = 0, busy_ns = 0, mapped_samples = 0,
             mapped_ns = 0;
    bool graph = false;
  };
  std::map<std::string, Sum> by_name;
  uint64_t other = 0, captured = 0, skipped = 0;
  {
    std::lock_guard lock(g_tallies_mutex);
    for (Tally* t : tallies()) {
      for (const Entry& e : t->table.slots()) {
        if (e.key.load(std::memory_order_acquire) == nullptr) continue;
        Sum& s = by_name[e.name];
        s.launches += e.launches.load(std::memory_order_relaxed);
        s.samples += e.samples.load(std::memory_order_relaxed);
        s.ns += e.sampled_ns.load(std::memory_order_relaxed);
        s.busy_samples += e.busy_samples.load(std::memory_order_relaxed);
        s.busy_ns += e.busy_ns.load(std::memory_order_relaxed);
        s.mapped_samples += e.mapped_samples.load(std::memory_order_relaxed);
        s.mapped_ns += e.mapped_ns.load(std::memory_order_relaxed);
        s.graph = e.graph;
      }
      other += t->other.load();
      captured += t->captured.load();
      skipped += t->skipped.load();
    }
  }
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return -1;
  std::fprintf(f,
               "{\"sample_mean\": %ld, \"other\": %llu, \"captured\": %llu, \"skipped\": %llu, "
               "\"kernels\": [",
               sample_mean(), static_cast<unsigned long long>(other),
               static_cast<unsigned long long>(captured), static_cast<unsigned long long>(skipped));
  bool first = true;
  for (const auto& [name, s] : by_name) {
    if (s.launches == 0) continue;
    std::string esc;
    for (char c : name) {
      if (c == '"' || c == '\\') esc += '\\';
      if (static_cast<unsigned char>(c) >= 0x20) esc += c;
    }
    std::fprintf(
        f,
        "%s\n {\"name\": \"%s\", \"graph\": %s, \"launches\": %llu, \"samples\": %llu, "
        "\"sampled_ns\": %llu, "
        "\"busy_samples\": %llu, \"busy_ns\": %llu, \"mapped_samples\": %llu, \"mapped_ns\": %llu}",
        first ? "" : ",", esc.c_str(), s.graph ? "true" : "false",
        static_cast<unsigned long long>(s.launches), static_cast<unsigned long long>(s.samples),
        static_cast<unsigned long long>(s.ns), static_cast<unsigned long long>(s.busy_samples),
        static_cast<unsigned long long>(s.busy_ns),
        static_cast<unsigned long long>(s.mapped_samples),
        static_cast<unsigned long long>(s.mapped_ns));
    first = false;
  }
  std::fprintf(f, "\n]}\n");
  std::fclose(f);
  return 0;
}

}  // extern "C"

namespace {
__attribute__((destructor)) void dump_at_exit() {
  if (const char* out = std::getenv("LAUNCH_HOOK_OUT")) launch_hook_dump(out);
}
}  // namespace

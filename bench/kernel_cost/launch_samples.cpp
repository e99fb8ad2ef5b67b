// SPDX-License-Identifier: Apache-2.0
// What launch_hook.cpp's library does with each launch it sees (launch_samples.hpp):
// a count in a thread-local table keyed by the launched function, and for a random
// sample of launches a pair of CUDA events around it, read at the thread's next
// timed launch. See launch_hook.cpp for the whole library and its settings.
#include "launch_samples.hpp"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "launch_tally.hpp"

namespace launch_hook {

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

namespace {

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

// Tallies of threads that ended, for the next new thread: a job whose pools start
// and end threads all day holds as many tallies as it ever ran threads at once, not
// one per thread it ever started (each is about half a megabyte). Counts carry over
// and the dump sums by name, so a reused tally keeps every launch. Its pairs in
// flight are reaped by the new thread; CUDA events outlive the thread that made them.
std::vector<Tally*>& free_tallies() {
  static auto* v = new std::vector<Tally*>;
  return *v;
}

struct TallyLease {
  Tally* t = nullptr;
  ~TallyLease() {  // the thread ends
    std::lock_guard lock(g_tallies_mutex);
    free_tallies().push_back(t);
  }
};

Tally& tally() {
  thread_local TallyLease lease;
  if (lease.t == nullptr) {
    std::lock_guard lock(g_tallies_mutex);
    if (!free_tallies().empty()) {
      lease.t = free_tallies().back();
      free_tallies().pop_back();
    } else {
      lease.t = new Tally;  // kept to the end, so that the dump at exit sees it
      lease.t->countdown = launch_tally::Countdown(reinterpret_cast<uintptr_t>(lease.t));
      tallies().push_back(lease.t);
    }
  }
  return *lease.t;
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

}  // namespace

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

}  // namespace launch_hook

using launch_hook::driver;
using launch_hook::Entry;
using launch_hook::g_mode;
using launch_hook::g_sample_mean;
using launch_hook::g_tallies_mutex;
using launch_hook::sample_mean;
using launch_hook::tallies;
using launch_hook::Tally;

extern "C" {

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
// "%p" in LAUNCH_HOOK_OUT stands for the process id, so that each process of a job
// of several (NCCL's ranks, a fork's child) keeps its own tally.
__attribute__((destructor)) void dump_at_exit() {
  const char* out = std::getenv("LAUNCH_HOOK_OUT");
  if (out == nullptr) return;
  std::string path = out;
  if (const size_t at = path.find("%p"); at != std::string::npos) {
    path.replace(at, 2, std::to_string(getpid()));
  }
  launch_hook_dump(path.c_str());
}
}  // namespace

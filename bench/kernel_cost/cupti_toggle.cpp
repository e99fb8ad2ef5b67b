// SPDX-License-Identifier: Apache-2.0
// libcupti_toggle.so: puts CUPTI into one of three states on request, from the
// caller's thread, so a benchmark can alternate them in short slots inside ONE
// process and compare each slot with its neighbours (issue: "which kernel" cheap
// enough to leave on). Earlier harnesses compared separate processes (phase B over
// phase A) and their intervals were ±15-40 %: two processes differ by more than
// CUPTI costs. Pairing slots of one process removes that.
//
// States (as libgpulens_kernels.so uses CUPTI's Activity API):
//   0 detached  CUPTI never initialised, or cuptiFinalize'd: no hook of ours
//   1 quiet     attached, every per-launch kind enabled once and now disabled,
//               buffers flushed: what the library leaves between trace windows
//   2 traced    attached, kernels, copies, memsets, synchronisations and NVTX
//               markers recorded: inside a trace window
// Every transition is made by the caller while no other thread of the process is
// inside CUDA (the harnesses park their launch threads first), which is what makes
// a finalise and a re-initialise safe here; the shipped library cannot promise it.
//
// ct_arm_finalize: the CUPTI guide's detach recipe instead of a move made here:
// subscribes to the runtime and driver API callbacks, and the job's own thread
// finalises (forced flush, then cuptiFinalize) at the exit of its outermost CUDA
// call once no call counted since the arming is inside CUDA (the bookkeeping of
// src/inject/detach_gate.cpp, as it stood, reduced to what this harness needs).
// Calls that began before the arming are not seen: the hole that gate had too.
//
// C ABI for ctypes (torch_slots.py) and the C++ harness (launch_slots.cu).
// libcupti is opened from $GPULENS_CUPTI (the copy the job already has loaded, so
// there is one CUPTI in the process), else "libcupti.so".
#include <cupti.h>
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace {

struct Api {
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&::cuptiActivityEnable) enable = nullptr;
  decltype(&::cuptiActivityDisable) disable = nullptr;
  decltype(&::cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&::cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&::cuptiFinalize) finalize = nullptr;
  decltype(&::cuptiSubscribe) subscribe = nullptr;
  decltype(&::cuptiEnableDomain) enable_domain = nullptr;
};

Api g_api;
std::atomic<int> g_state{0};
std::atomic<long> g_records{0};
char g_error[256] = "";

constexpr CUpti_ActivityKind kPerLaunch[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MARKER};

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8u << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

// Walks every record as the library's collector does (it reads each one), so a
// traced slot pays the reading too.
void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  long n = 0;
  while (g_api.next_record(buffer, valid, &r) == CUPTI_SUCCESS) ++n;
  g_records += n;
  std::free(buffer);
}

template <typename F>
bool resolve(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  if (f == nullptr) std::snprintf(g_error, sizeof g_error, "%s missing", name);
  return f != nullptr;
}

bool open_api() {
  if (g_api.enable != nullptr) return true;
  const char* path = std::getenv("GPULENS_CUPTI");
  void* h = dlopen(path != nullptr && *path != '\0' ? path : "libcupti.so", RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    std::snprintf(g_error, sizeof g_error, "%s", dlerror());
    return false;
  }
  return resolve(h, "cuptiActivityRegisterCallbacks", g_api.register_callbacks) &&
         resolve(h, "cuptiActivityEnable", g_api.enable) &&
         resolve(h, "cuptiActivityDisable", g_api.disable) &&
         resolve(h, "cuptiActivityFlushAll", g_api.flush_all) &&
         resolve(h, "cuptiActivityGetNextRecord", g_api.next_record) &&
         resolve(h, "cuptiFinalize", g_api.finalize) &&
         resolve(h, "cuptiSubscribe", g_api.subscribe) &&
         resolve(h, "cuptiEnableDomain", g_api.enable_domain);
}

bool ok(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  std::snprintf(g_error, sizeof g_error, "%s: CUPTI error %d", what, static_cast<int>(r));
  return false;
}

bool attach() {
  return ok(g_api.register_callbacks(requested, completed), "register") &&
         ok(g_api.enable(CUPTI_ACTIVITY_KIND_DEVICE), "enable DEVICE");
}

bool kinds(bool on) {
  for (CUpti_ActivityKind k : kPerLaunch) {
    if (!ok(on ? g_api.enable(k) : g_api.disable(k), on ? "enable" : "disable")) return false;
  }
  return true;
}

double now_us() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// The job-thread finalise (ct_arm_finalize).
std::mutex g_gate;
bool g_armed = false;
std::atomic<bool> g_finalizing{false};
int g_inflight = 0;
std::uint64_t g_epoch = 0;
thread_local int t_depth = 0;
thread_local std::uint64_t t_epoch = 0;
std::atomic<long> g_job_finalizes{0};
CUpti_SubscriberHandle g_subscriber = nullptr;

// Never waits for a finalise: cuptiFinalize may wait for the callbacks under way.
std::unique_lock<std::mutex> try_hold() {
  for (int tries = 0; tries < 1000; ++tries) {
    if (g_finalizing.load(std::memory_order_acquire)) break;
    std::unique_lock lock(g_gate, std::try_to_lock);
    if (lock.owns_lock()) return lock;
    std::this_thread::yield();
  }
  return {};
}

void CUPTIAPI on_api(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  auto lock = try_hold();
  if (!lock.owns_lock() || !g_armed) return;
  if (t_epoch != g_epoch) {
    t_epoch = g_epoch;
    t_depth = 0;
  }
  if (info->callbackSite == CUPTI_API_ENTER) {
    ++t_depth;
    ++g_inflight;
    return;
  }
  if (t_depth == 0) return;  // entered before the arming
  --t_depth;
  --g_inflight;
  if (t_depth > 0 || g_inflight > 0) return;
  g_armed = false;
  g_finalizing.store(true, std::memory_order_release);
  g_api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_api.finalize();  // also removes the subscriber
  g_state.store(0);
  ++g_job_finalizes;
}

}  // namespace

extern "C" {

// Arms a finalise on the job's next outermost API exit (above). From traced only
// (graph_moves.py: finalising from quiet breaks CUDA graphs). 0, or -1.
int ct_arm_finalize() {
  if (g_state.load() != 2) {
    std::snprintf(g_error, sizeof g_error, "arm needs traced");
    return -1;
  }
  g_finalizing.store(false);
  if (!ok(g_api.subscribe(&g_subscriber, reinterpret_cast<CUpti_CallbackFunc>(&on_api), nullptr),
          "subscribe") ||
      !ok(g_api.enable_domain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "enable runtime") ||
      !ok(g_api.enable_domain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "enable driver")) {
    return -1;
  }
  std::lock_guard lock(g_gate);
  g_armed = true;
  g_inflight = 0;
  ++g_epoch;
  return 0;
}

long ct_job_finalizes() {
  return g_job_finalizes.load();
}

// Moves CUPTI to `state` (0, 1, 2 above). Returns the microseconds the move took,
// or -1 (ct_error says why). Quiet from detached goes through traced: the caller
// must launch work between the two calls for "enabled once" to mean anything, so
// it is refused here; the harnesses go detached -> traced -> (work) -> quiet.
double ct_goto(int state) {
  const double t0 = now_us();
  if (!open_api()) return -1;
  if (state == g_state.load()) return 0;
  bool good = true;
  if (state == 2) {
    good = (g_state.load() == 0 ? attach() : true) && kinds(true);
  } else if (state == 1) {
    if (g_state.load() == 0) {
      std::snprintf(g_error, sizeof g_error, "quiet needs traced first");
      return -1;
    }
    good = kinds(false) && ok(g_api.flush_all(0), "flush");
  } else if (state == 0) {
    if (g_state.load() == 2) good = kinds(false);
    good = good && ok(g_api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "flush forced") &&
           ok(g_api.finalize(), "finalize");
  } else {
    std::snprintf(g_error, sizeof g_error, "no state %d", state);
    return -1;
  }
  if (!good) return -1;
  g_state = state;
  return now_us() - t0;
}

int ct_state() {
  return g_state.load();
}

long ct_records() {
  return g_records.load();
}

const char* ct_error() {
  return g_error;
}

}  // extern "C"

// SPDX-License-Identifier: Apache-2.0
// What CUPTI costs a launch-bound job in each state it can be left in between
// trace windows (issue: the kernel view's cost outside its windows).
//
// One process per run: phase A measures the CUDA runtime's cost per kernel
// launch and per launch+synchronise round trip with CUPTI untouched; then the
// process puts CUPTI into one STATE; phase B measures the same again. The
// harness (cupti_states.py) runs every state in turn for several rounds and
// compares B/A against the `none` state's B/A, so drift in a process (clocks,
// the machine's other tenants) cancels and each state's own cost remains.
//
// States (all through the Activity API, as libgpulens_kernels.so uses it):
//   none        nothing: the control
//   register    cuptiActivityRegisterCallbacks only
//   device      + DEVICE kind enabled (what the library leaves on)
//   kernel_on   + CONCURRENT_KERNEL enabled: inside a window, kernels only
//   kernel_off  CONCURRENT_KERNEL enabled, 2000 launches, flushed, disabled
//   all_on      the six kinds the library records enabled: inside a window
//   all_off     the six enabled, 2000 launches, flushed, disabled: between
//               windows as the library leaves CUPTI today
//   sync_off, memcpy_off, memset_off, marker_off
//               one kind enabled, used, disabled: which kind leaves a cost
//   finalize    all_off, then cuptiFinalize (the detach that crashed PyTorch)
//   inject      no CUPTI call here: run under CUDA_INJECTION64_PATH (the
//               harness sets it and GPULENS_KERNELS_DIR), the process sets its
//               own GPULENS_KERNELS_SCHEDULE so that one trace window of 0.5 s
//               opens after phase A, waits for the window's chunk in its
//               record, then measures phase B: the library between windows,
//               against the same process before its first window
//   inject_attached  the same with GPULENS_KERNELS_DETACH=0 (the harness sets
//               it): CUPTI left attached, every kind off, between windows
//
// GPULENS_KERNELS_DETACH is gone: the library no longer detaches CUPTI between
// windows (docs/kernels.md, "What it costs"), so `inject` and `inject_attached`
// now measure the same thing, CUPTI left attached. The results in
// bench/results/kernels-v4/ were taken with a library that still had the knob
// (detaching was its default then).
//
// Usage: cupti_states STATE PHASE_SECONDS [SLEEP_SECONDS]
// Prints one JSON line. libcupti is opened (dlopen) only by states that use it,
// from $GPULENS_CUPTI, so a run under the injection library holds one copy.
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

__global__ void empty_kernel() {}

using Clock = std::chrono::steady_clock;

struct Phase {
  double launch_us = 0;  // median per launch, batches of 256 launches then a sync
  double sync_us = 0;    // median launch + cudaStreamSynchronize round trip
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Alternates 50 ms of launch batches and 50 ms of round trips until `end`. A
// batch times the host's 256 launches only (the queue holds them all): what a
// tracer adds to each launch, not the GPU's time to run empty kernels.
Phase measure_until(Clock::time_point end) {
  std::vector<double> launch, sync;
  while (Clock::now() < end) {
    const auto slot_end = Clock::now() + std::chrono::milliseconds(50);
    while (Clock::now() < slot_end) {
      const auto t0 = Clock::now();
      for (int i = 0; i < 256; ++i) empty_kernel<<<1, 1>>>();
      const auto t1 = Clock::now();
      cudaStreamSynchronize(nullptr);
      launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 256);
    }
    const auto slot2_end = Clock::now() + std::chrono::milliseconds(50);
    while (Clock::now() < slot2_end) {
      const auto t0 = Clock::now();
      empty_kernel<<<1, 1>>>();
      cudaStreamSynchronize(nullptr);
      sync.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
  return {median(launch), median(sync)};
}

Clock::time_point after(Clock::time_point t, double seconds) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

Phase measure(double seconds) {
  return measure_until(after(Clock::now(), seconds));
}

std::int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Waits until the injection library has written this process's record (it does
// at the first window's close); false after `timeout_s`.
bool wait_for_record(double timeout_s) {
  const char* dir = std::getenv("GPULENS_KERNELS_DIR");
  if (dir == nullptr) return false;
  const std::string path = std::string(dir) + "/kernels-" + std::to_string(getpid()) + ".jsonl";
  const auto end = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < end) {
    if (access(path.c_str(), F_OK) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

struct Cupti {
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&::cuptiActivityEnable) enable = nullptr;
  decltype(&::cuptiActivityDisable) disable = nullptr;
  decltype(&::cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&::cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&::cuptiFinalize) finalize = nullptr;
};
Cupti g;
long g_records = 0;

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  while (g.next_record(buffer, valid, &r) == CUPTI_SUCCESS) ++g_records;
  free(buffer);
}

template <typename F>
void resolve(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  if (f == nullptr) {
    std::fprintf(stderr, "cupti_states: %s missing\n", name);
    std::exit(2);
  }
}

void open_cupti() {
  const char* path = std::getenv("GPULENS_CUPTI");
  void* h = dlopen(path != nullptr ? path : "libcupti.so", RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    std::fprintf(stderr, "cupti_states: %s\n", dlerror());
    std::exit(2);
  }
  resolve(h, "cuptiActivityRegisterCallbacks", g.register_callbacks);
  resolve(h, "cuptiActivityEnable", g.enable);
  resolve(h, "cuptiActivityDisable", g.disable);
  resolve(h, "cuptiActivityFlushAll", g.flush_all);
  resolve(h, "cuptiActivityGetNextRecord", g.next_record);
  resolve(h, "cuptiFinalize", g.finalize);
  if (g.register_callbacks(requested, completed) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cupti_states: register failed\n");
    std::exit(2);
  }
}

void check(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cupti_states: %s failed (%d)\n", what, static_cast<int>(r));
    std::exit(2);
  }
}

void use_then_disable(const std::vector<CUpti_ActivityKind>& kinds) {
  for (auto k : kinds) check(g.enable(k), "enable");
  void* p = nullptr;
  cudaMalloc(&p, 1 << 20);
  std::vector<char> host(1 << 20);
  for (int i = 0; i < 2000; ++i) empty_kernel<<<1, 1>>>();
  cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice);
  cudaMemset(p, 0, 1 << 20);
  cudaDeviceSynchronize();
  cudaFree(p);
  for (auto k : kinds) check(g.disable(k), "disable");
  g.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

const std::vector<CUpti_ActivityKind> kAll = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MARKER};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cupti_states STATE PHASE_SECONDS [SLEEP_SECONDS]\n");
    return 2;
  }
  const std::string state = argv[1];
  const double seconds = std::atof(argv[2]);
  const double sleep_s = argc > 3 ? std::atof(argv[3]) : 0.2;
  const auto start = Clock::now();
  const bool inject = state.rfind("inject", 0) == 0;
  if (inject) {
    // The window opens 1 s after phase A's fixed end, whatever CUDA's start took.
    const std::string schedule =
        std::to_string(unix_ns()) + ":" + std::to_string(seconds + 2.0) + ":0.5:100000";
    setenv("GPULENS_KERNELS_SCHEDULE", schedule.c_str(), 1);
  }
  cudaFree(nullptr);
  measure(0.3);  // warm: clocks up, first launches paid
  const Phase a = measure_until(after(start, seconds + 1.0));
  if (state == "none") {
  } else if (inject) {
    if (!wait_for_record(10)) {
      std::fprintf(stderr, "cupti_states: no trace window closed within 10 s\n");
      return 3;
    }
  } else {
    open_cupti();
    if (state == "register") {
    } else if (state == "device") {
      check(g.enable(CUPTI_ACTIVITY_KIND_DEVICE), "enable DEVICE");
    } else if (state == "kernel_on") {
      check(g.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable");
    } else if (state == "kernel_off") {
      use_then_disable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
    } else if (state == "all_on") {
      check(g.enable(CUPTI_ACTIVITY_KIND_DEVICE), "enable DEVICE");
      for (auto k : kAll) check(g.enable(k), "enable");
    } else if (state == "all_off" || state == "finalize") {
      check(g.enable(CUPTI_ACTIVITY_KIND_DEVICE), "enable DEVICE");
      use_then_disable(kAll);
      if (state == "finalize") check(g.finalize(), "finalize");
    } else if (state == "sync_off") {
      use_then_disable({CUPTI_ACTIVITY_KIND_SYNCHRONIZATION});
    } else if (state == "memcpy_off") {
      use_then_disable({CUPTI_ACTIVITY_KIND_MEMCPY});
    } else if (state == "memset_off") {
      use_then_disable({CUPTI_ACTIVITY_KIND_MEMSET});
    } else if (state == "marker_off") {
      use_then_disable({CUPTI_ACTIVITY_KIND_MARKER});
    } else {
      std::fprintf(stderr, "cupti_states: unknown state %s\n", state.c_str());
      return 2;
    }
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
  measure(0.2);
  const Phase b = measure(seconds);
  std::printf(
      "{\"state\":\"%s\",\"launch_a\":%.4f,\"launch_b\":%.4f,\"sync_a\":%.4f,\"sync_b\":%.4f,"
      "\"records\":%ld}\n",
      state.c_str(), a.launch_us, b.launch_us, a.sync_us, b.sync_us, g_records);
  return 0;
}

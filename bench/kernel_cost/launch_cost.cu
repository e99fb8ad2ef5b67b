// SPDX-License-Identifier: Apache-2.0
// Issue 51: what a kernel launch costs under each way of seeing it, one way per
// process (hook_run.sh alternates the processes round by round).
//
//   launch_cost LABEL THREADS SLOTS SLOT_MS
//     LABEL c: CUPTI's callback API subscribed to the four launch callbacks of the
//     driver (no activity kind ever enabled), a thread-local count in the callback.
//     LABEL p: paired slots in one process under launch_hook.so: each cycle runs, in a
//     random order, a slot of each of D (the driver's cuLaunchKernel called directly),
//     P (through the hook's wrapper, passing launches on), C (the wrapper counting) and
//     S (the wrapper counting and timing 1 launch in $HOOK_PAIRED_SAMPLE, default
//     100); SLOTS is then the cycles. PAIRED_KINDS=DC (any of D, P, C and S) runs
//     only those slots each cycle.
//     Any other label: nothing done here; the label says how the process was started
//     (n: alone; h: under launch_hook.so counting; s: under launch_hook.so sampling).
//
// The launches are launch_loop.cuh's. One JSON line per slot, then one line with the
// launches seen (by launch_hook.so when it is there, or by the callbacks of mode c)
// against the launches made.
#include <cupti.h>
#include <dlfcn.h>

#include <random>
#include <string>

#include "launch_loop.cuh"

namespace {

using launch_loop::empty_kernel;
using launch_loop::LaunchFn;

thread_local unsigned long long t_seen = 0;
std::atomic<unsigned long long> g_seen{0};

void CUPTIAPI on_launch(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  if (static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_ENTER) ++t_seen;
}

// CUPTI opened only in mode c, so that the other processes never load it.
void subscribe_launch_callbacks() {
  void* h = dlopen("libcupti.so", RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) h = dlopen(std::getenv("LAUNCH_COST_CUPTI"), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    std::fprintf(stderr, "no libcupti (set LAUNCH_COST_CUPTI)\n");
    std::exit(1);
  }
  auto subscribe = reinterpret_cast<decltype(&cuptiSubscribe)>(dlsym(h, "cuptiSubscribe"));
  auto enable = reinterpret_cast<decltype(&cuptiEnableCallback)>(dlsym(h, "cuptiEnableCallback"));
  CUpti_SubscriberHandle sub;
  if (subscribe(&sub, reinterpret_cast<CUpti_CallbackFunc>(on_launch), nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cuptiSubscribe failed\n");
    std::exit(1);
  }
  for (CUpti_CallbackId id : {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                              CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                              CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz}) {
    enable(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: launch_cost LABEL THREADS SLOTS SLOT_MS\n");
    return 2;
  }
  const char mode = argv[1][0];
  const int threads = std::atoi(argv[2]);
  const int slots = std::atoi(argv[3]);
  const int slot_ms = std::atoi(argv[4]);
  CU_OK(cudaFree(nullptr));
  if (mode == 'c') subscribe_launch_callbacks();
  using CountFn = unsigned long long (*)();
  auto hook_count = reinterpret_cast<CountFn>(dlsym(RTLD_DEFAULT, "launch_hook_launches"));
  const unsigned long long hook_before = hook_count ? hook_count() : 0;
  launch_loop::Launcher l(threads, [] { g_seen += t_seen; });
  if (mode == 'p') {
    using SetFn = void (*)(int, long);
    using RealFn = void* (*)();
    auto set = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "launch_hook_set"));
    auto real = reinterpret_cast<RealFn>(dlsym(RTLD_DEFAULT, "launch_hook_real_launch"));
    auto wrapper = reinterpret_cast<LaunchFn>(dlsym(RTLD_DEFAULT, "cuLaunchKernel"));
    if (set == nullptr || real == nullptr || wrapper == nullptr) {
      std::fprintf(stderr, "mode p needs LD_PRELOAD=liblaunch_hook.so\n");
      return 2;
    }
    CUfunction fn = nullptr;
    CU_OK(cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&fn), reinterpret_cast<const void*>(&empty_kernel)));
    const auto direct = reinterpret_cast<LaunchFn>(real());
    const char* ps = std::getenv("HOOK_PAIRED_SAMPLE");
    const long paired_sample = ps ? std::atol(ps) : 100;
    std::mt19937 rng(12345);
    // PAIRED_KINDS picks the slots of a cycle (default DPCS). "DC" spends the time on
    // the one comparison that matters when every wrapped kind counts alike (a library
    // first in LD_PRELOAD): twice the cycles of DPCS in the same time.
    const char* pk = std::getenv("PAIRED_KINDS");
    const std::string kinds = pk != nullptr && *pk != '\0' ? pk : "DPCS";
    for (int cycle = 0; cycle < slots + 1; ++cycle) {  // the first cycle warms up, unreported
      std::vector<char> order(kinds.begin(), kinds.end());
      std::shuffle(order.begin(), order.end(), rng);
      for (char k : order) {
        l.launch_by(k == 'D' ? direct : wrapper, fn);
        set(k == 'P' ? 0 : k == 'S' ? 2 : 1, paired_sample);
        const double us = l.slot(slot_ms);
        if (cycle > 0) {
          std::printf("{\"mode\": \"p\", \"kind\": \"%c\", \"threads\": %d, \"cycle\": %d, \"us_per_launch\": %.4f}\n",
                      k, threads, cycle, us);
        }
      }
    }
    set(1, 0);
  } else {
    for (int slot = 0; slot < slots + 1; ++slot) {  // the first slot warms up, unreported
      const double us = l.slot(slot_ms);
      if (slot > 0) {
        std::printf("{\"mode\": \"%c\", \"threads\": %d, \"slot\": %d, \"us_per_launch\": %.4f}\n", mode, threads,
                    slot, us);
      }
    }
  }
  const unsigned long long made = l.stop();
  const unsigned long long seen = mode == 'c' ? g_seen.load() : hook_count ? hook_count() - hook_before : 0;
  std::printf("{\"mode\": \"%c\", \"threads\": %d, \"launches_made\": %llu, \"launches_seen\": %llu}\n", mode,
              threads, made, seen);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// What counting a kernel launch costs the launching thread in the launch-hook
// experiment of issue 51 (bench/kernel_cost/launch_hook.cpp): the thread-local table
// lookup, the count and the sampling countdown that every launch runs before the
// driver's own cuLaunchKernel. The driver calls of a timed launch are not here; the
// GPU harness (bench/kernel_cost/hook_run.sh) measures those with the launch.
//
// The figure to set beside it is what a launch costs without the hook: 3.75 us for an
// empty kernel from one thread on the H200 machine (bench/results/
// launch-hook-h200-2026-11-29). Keys are spread like a job's: a handful of kernels
// (a graph replay or a simple loop), a model's few dozen, a large job's hundreds.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel_cost/launch_tally.hpp"

namespace {

constexpr std::size_t kSlots = 4096;  // as in launch_hook.cpp

struct ThreadTally {
  launch_tally::Table<kSlots> table;
  launch_tally::Countdown countdown{0x9E3779B97F4A7C15ULL};
};

// The hook reaches its table through a thread_local lease whose destructor hands the
// table on when the thread ends (launch_samples.cpp), as here.
struct Lease {
  ThreadTally* t = nullptr;
  ~Lease() { delete t; }
};

ThreadTally& tally() {
  thread_local Lease lease;
  if (lease.t == nullptr) lease.t = new ThreadTally;
  return *lease.t;
}

std::string name_of(const void* key, bool /*graph*/) {
  return "kernel_" + std::to_string(reinterpret_cast<std::uintptr_t>(key));
}

// Addresses 0x7f00'0000'0000 + 0x1c0 * i: CUfunction handles are heap objects a few
// hundred bytes apart.
std::vector<const void*> keys(std::size_t n) {
  std::vector<const void*> k;
  for (std::size_t i = 0; i < n; ++i) {
    k.push_back(reinterpret_cast<const void*>(
        static_cast<std::uintptr_t>(0x7f0000000000ULL + 0x1c0ULL * (i + 1))));
  }
  return k;
}

void count_launches(benchmark::State& state, long sample_mean) {
  const auto k = keys(static_cast<std::size_t>(state.range(0)));
  std::size_t i = 0;
  std::uint64_t timed = 0;
  for (auto _ : state) {
    ThreadTally& t = tally();
    launch_tally::Entry* e = t.table.find(k[i], false, name_of);
    if (e != nullptr) launch_tally::bump(e->launches);
    if (t.countdown.tick(sample_mean)) ++timed;
    benchmark::DoNotOptimize(e);
    if (++i == k.size()) i = 0;
  }
  state.counters["timed_share"] =
      benchmark::Counter(static_cast<double>(timed) / static_cast<double>(state.iterations()));
}

// Counting only (LAUNCH_HOOK_SAMPLE=0).
void BM_LaunchTally_Count(benchmark::State& state) {
  count_launches(state, 0);
}
BENCHMARK(BM_LaunchTally_Count)->Arg(4)->Arg(40)->Arg(400)->ThreadRange(1, 2);

// Counting and deciding which launch to time, 1 in 1000 (the decision only).
void BM_LaunchTally_CountAndDecide(benchmark::State& state) {
  count_launches(state, 1000);
}
BENCHMARK(BM_LaunchTally_CountAndDecide)->Arg(4)->Arg(40)->Arg(400)->ThreadRange(1, 2);

}  // namespace

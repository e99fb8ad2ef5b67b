// SPDX-License-Identifier: Apache-2.0
// What counting a kernel launch costs the launching thread in libgpulens_launches.so
// (src/launch_count, on by default in `gpulens run`): the thread's table found through
// its TLS pointer, the key looked up and its count bumped: everything the library runs
// on a launch but the call into the driver. The GPU harness (bench/launch_count/
// device_run.sh) measures it with the launch; this is its floor, the function alone.
//
// The figure to set beside it: an empty kernel's launch costs 3.7 us from one thread
// and 6.2 us from four on the H200 machine (bench/results/launch-count-h200-2026-11-30).
// Keys are spread like a job's: a handful of kernels, a model's few dozen, a large
// job's hundreds. They are counted as graphs, which need no name from a driver (a
// kernel's is asked once per thread, at its first launch, and never again).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "launch_count/counts.hpp"

namespace {

// Addresses a few hundred bytes apart, as the driver's handles are.
std::vector<const void*> launch_keys(std::size_t n) {
  std::vector<const void*> k;
  for (std::size_t i = 0; i < n; ++i) {
    k.push_back(reinterpret_cast<const void*>(
        static_cast<std::uintptr_t>(0x7e0000000000ULL + 0x1c0ULL * (i + 1))));
  }
  return k;
}

void BM_LaunchCount(benchmark::State& state) {
  const auto k = launch_keys(static_cast<std::size_t>(state.range(0)));
  std::size_t i = 0;
  for (auto _ : state) {
    gpulens::launch_count::count_launch(k[i], true);
    if (++i == k.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LaunchCount)->Arg(4)->Arg(40)->Arg(400)->ThreadRange(1, 4);

}  // namespace

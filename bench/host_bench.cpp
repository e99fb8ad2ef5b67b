// SPDX-License-Identifier: Apache-2.0
// Host readings per tick: /proc/stat read and parsed for the host CPU figure, as
// the sampler does on every tick (the kernel's cost of generating the file is part
// of it). Beside it, the NVML floor without GPM is about 60 us per GPU per tick
// (bench/results/overhead-h100.txt).
#include <benchmark/benchmark.h>

#include "sources/host/host_collector.hpp"

namespace gpulens {
namespace {

// Arg 0: the CPU figure only (what the sampler reads each tick); 1: with memory.
void BM_HostReading(benchmark::State& state) {
  const sources::HostReadings what =
      state.range(0) == 0 ? sources::HostReadings::CpuOnly : sources::HostReadings::CpuAndMemory;
  sources::HostCollector host;
  for (auto _ : state) {
    auto snapshot = host.sample(what);
    benchmark::DoNotOptimize(snapshot);
  }
}
BENCHMARK(BM_HostReading)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpulens

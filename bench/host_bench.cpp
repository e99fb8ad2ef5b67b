// Host readings per tick: /proc/stat read and parsed for the host CPU figure, as
// the sampler does on every tick (the kernel's cost of generating the file is part
// of it). Beside it, the NVML floor without GPM is about 60 us per GPU per tick
// (bench/results/overhead-h100.txt).
#include <benchmark/benchmark.h>

#include "sources/host/host_collector.hpp"

namespace gpulens {
namespace {

void BM_HostCpuReading(benchmark::State& state) {
  HostCollector host;
  for (auto _ : state) {
    auto snapshot = host.sample(HostReadings::CpuOnly);
    benchmark::DoNotOptimize(snapshot);
  }
}
BENCHMARK(BM_HostCpuReading)->Unit(benchmark::kMicrosecond);

void BM_HostCpuAndMemoryReading(benchmark::State& state) {
  HostCollector host;
  for (auto _ : state) {
    auto snapshot = host.sample(HostReadings::CpuAndMemory);
    benchmark::DoNotOptimize(snapshot);
  }
}
BENCHMARK(BM_HostCpuAndMemoryReading)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpulens

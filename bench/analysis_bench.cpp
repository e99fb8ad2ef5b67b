// SPDX-License-Identifier: Apache-2.0
// Analysis cost per sample per GPU, to set beside the ~1.2 ms of CPU that one
// full NVML+GPM sample of one GPU costs (docs/nvml-facts.md). The engine replays
// the reference recordings tick by tick, as it would run live.
#include <benchmark/benchmark.h>

#include <map>
#include <string>

#include "core/trace_reader.hpp"
#include "diagnosis/classifier.hpp"
#include "diagnosis/efficiency.hpp"
#include "diagnosis/engine.hpp"
#include "diagnosis/timeline.hpp"

namespace gpulens {
namespace {

struct Recording {
  TraceHeader header;
  std::vector<Tick> ticks;
  std::size_t samples = 0;
};

const Recording& recording(const std::string& name) {
  static std::map<std::string, Recording> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  Recording r;
  auto trace =
      read_trace(std::string(GPULENS_SOURCE_DIR) + "/" + name, TraceReadOptions{.lenient = true});
  if (trace) {
    r.header = trace->header;
    r.ticks = diagnosis::ticks_from_trace(*trace);
    r.samples = trace->samples.size();
  }
  return cache.emplace(name, std::move(r)).first->second;
}

// Time per sample (one GPU, one tick) through DiagnosisEngine::on_tick, with
// the window, level-shift test, classifier, throttle, memory trend and every
// alert rule. A fresh engine per pass over the recording.
void BM_EngineOnTick(benchmark::State& state, const std::string& name) {
  const Recording& r = recording(name);
  if (r.ticks.empty()) {
    state.SkipWithError("recording not found");
    return;
  }
  for (auto _ : state) {
    diagnosis::DiagnosisEngine engine(r.header, diagnosis::DiagnosisConfig::defaults());
    for (const auto& tick : r.ticks) engine.on_tick(tick);
    benchmark::DoNotOptimize(engine.status(0).state.state);
  }
  const auto samples = static_cast<double>(r.samples) * static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(samples));
  state.counters["per_sample"] =
      benchmark::Counter(samples, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_EngineOnTick, calibration_h100_1gpu, "examples/calibration-h100.trace.jsonl")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EngineOnTick, multi_h200_2gpu,
                  "tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl")
    ->Unit(benchmark::kMillisecond);

// The offline report on top: timeline runs, phase accumulators, snapshots.
void BM_ReportBuilder(benchmark::State& state) {
  const Recording& r = recording("tests/fixtures/traces/training-h100.trace.jsonl");
  for (auto _ : state) {
    diagnosis::ReportBuilder builder(r.header, diagnosis::DiagnosisConfig::defaults());
    for (const auto& tick : r.ticks) builder.add(tick);
    benchmark::DoNotOptimize(builder.finish().phases.size());
  }
  const auto samples = static_cast<double>(r.samples) * static_cast<double>(state.iterations());
  state.counters["per_sample"] =
      benchmark::Counter(samples, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ReportBuilder)->Unit(benchmark::kMillisecond);

// The classifier alone on a full 5 s window.
void BM_ClassifyState(benchmark::State& state) {
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.pcie_gen = 5;
  d.pcie_width = 16;
  const auto hw = diagnosis::hardware_limits(d);
  diagnosis::SampleWindow w(diagnosis::WindowSettings{}, hw);
  for (int i = 0; i < 50; ++i) {
    Sample s;
    s.t = 0.1 * i;
    s.values.set(Metric::GpuUtil, 100);
    s.values.set(Metric::SmActive, 0.76);
    s.values.set(Metric::DramActive, 0.001);
    w.push(s);
  }
  const diagnosis::Thresholds th;
  const std::vector<diagnosis::PeerActivity> peers;
  for (auto _ : state)
    benchmark::DoNotOptimize(diagnosis::classify_state(w.stats(), hw, th, peers, 5.0));
}
BENCHMARK(BM_ClassifyState);

void BM_EfficiencyScore(benchmark::State& state) {
  double util = 97.0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(diagnosis::efficiency_score(util, 17.0));
    util = util > 99 ? 50 : util + 0.5;
  }
}
BENCHMARK(BM_EfficiencyScore);

}  // namespace
}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
// History costs: bytes on disk per GPU-day (raw samples at 1 Hz plus one-minute
// rollups), and a 24-hour history query at a one-minute step for 8 GPUs.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "core/trace_reader.hpp"
#include "store/history_query.hpp"
#include "store/history_store.hpp"

namespace gpulens::store {
namespace {

// Real readings: the H100 calibration recording, cycled to fill a day.
const std::vector<Sample>& recorded() {
  static const std::vector<Sample> samples = [] {
    auto trace =
        read_trace(std::string(GPULENS_SOURCE_DIR) + "/examples/calibration-h100.trace.jsonl");
    return trace ? trace->samples : std::vector<Sample>{};
  }();
  return samples;
}

const char* kStates[] = {"idle", "compute_bound", "sm_underused", "memory_bound", "host_bound"};

// One simulated day at 1 Hz for `gpus` GPUs, written a minute at a time as the
// agent's writer does, with rollups as minutes close.
Status fill_day(HistoryStore& store, int gpus, double start) {
  const auto& src = recorded();
  std::vector<StoredSample> batch;
  for (int s = 0; s < 86400; ++s) {
    for (int g = 0; g < gpus; ++g) {
      StoredSample row;
      row.gpu = g;
      row.t = start + s;
      row.values = src[static_cast<std::size_t>(s * 7 + g) % src.size()].values;
      row.state = kStates[(s / 600 + g) % 5];
      batch.push_back(std::move(row));
    }
    if (batch.size() >= static_cast<std::size_t>(60 * gpus)) {
      if (auto st = store.write(batch, {}); !st) return st;
      if (auto st = store.roll_up_closed(); !st) return st;
      batch.clear();
    }
  }
  if (auto st = store.write(batch, {}); !st) return st;
  if (auto st = store.roll_up_closed(true); !st) return st;
  if (auto st = store.enforce_limits(); !st) return st;
  return store.checkpoint();
}

std::string scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("gpulens-bench-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return (dir / "h.db").string();
}

void BM_StoreBytesPerGpuDay(benchmark::State& state) {
  double bytes = 0, raw = 0, rollup = 0;
  for (auto _ : state) {
    StoreOptions o;
    o.path = scratch("bytes");
    auto store = HistoryStore::open(o);
    if (!store || !fill_day(*store, 1, 1.7e9)) {
      state.SkipWithError("could not write the day");
      return;
    }
    auto pages = [&](const char* table) {
      auto n = store->db().query_int(
          std::string("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name = '") + table + "'");
      return n ? static_cast<double>(*n) : 0.0;
    };
    raw = pages("samples");
    rollup = pages("rollup_1m");
    bytes = static_cast<double>(store->stats().file_bytes);
    std::filesystem::remove_all(std::filesystem::path(o.path).parent_path());
  }
  state.counters["file_bytes_per_gpu_day"] = bytes;
  state.counters["raw_bytes_per_gpu_day"] = raw;
  state.counters["rollup_bytes_per_gpu_day"] = rollup;
}
BENCHMARK(BM_StoreBytesPerGpuDay)->Iterations(1)->Unit(benchmark::kMillisecond);

// 24 hours for 8 GPUs at a one-minute step, the dashboard's "24h" view.
void BM_History24hQuery(benchmark::State& state) {
  static std::string path;
  if (path.empty()) {
    path = scratch("query");
    StoreOptions o;
    o.path = path;
    auto store = HistoryStore::open(o);
    if (!store || !fill_day(*store, 8, 1.7e9)) {
      state.SkipWithError("could not write the day");
      return;
    }
  }
  HistoryReader reader(path, std::chrono::seconds(60));
  HistoryQuery q;
  q.from = 1.7e9;
  q.to = 1.7e9 + 86400;
  q.step = static_cast<double>(state.range(0));
  q.metrics = {Metric::GpuUtil,    Metric::SmActive, Metric::TensorActive,
               Metric::DramActive, Metric::PowerW,   Metric::MemUsedMib};
  std::string source;
  std::size_t points = 0;
  for (auto _ : state) {
    auto r = reader.history(q);
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    source = r->source;
    points = r->series.empty() ? 0 : r->series[0].t.size();
  }
  state.counters["points_per_gpu"] = static_cast<double>(points);
  state.SetLabel(source);
}
// 60 s: the API's path (rollups); 30 s: the same day from raw samples.
BENCHMARK(BM_History24hQuery)->Arg(60)->Arg(30)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpulens::store

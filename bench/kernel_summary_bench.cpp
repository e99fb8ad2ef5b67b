// SPDX-License-Identifier: Apache-2.0
// /api/v1/kernels/summary at its scale: a day of an 8-GPU node's kernel windows
// (one every 20 s per GPU, 34,560 in all, each naming ten kernels of 120-byte
// names drawn from a job's forty) summed per GPU and process and written as the
// JSON the dashboard fetches. The agent holds the store's lock while it sums
// (KernelStore::for_each), so this is also how long a day's summary keeps new
// windows waiting.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "agent/kernel_aggregate.hpp"
#include "exposition/api_json.hpp"

namespace gpulens::exposition {
namespace {

constexpr int kGpus = 8;
constexpr std::int64_t kDayStart = 1732200000;

const agent::KernelStore& day_of_eight_gpus() {
  static const agent::KernelStore* store = [] {
    auto* s = new agent::KernelStore(agent::kKernelWindowsPerGpu);
    std::vector<std::string> names;
    for (int n = 0; n < 40; ++n) {
      std::string name = fmt::format("void at::native::elementwise_kernel_{}<", n);
      name.resize(120, 'T');
      names.push_back(std::move(name));
    }
    for (std::size_t i = 0; i < agent::kKernelWindowsPerGpu; ++i) {
      for (int gpu = 0; gpu < kGpus; ++gpu) {
        agent::KernelWindow w;
        w.gpu = gpu;
        w.pid = 4000 + static_cast<std::uint32_t>(gpu);
        w.process = "python3";
        w.kube = {"ml-training", "llama-finetune-7b-0", "trainer"};
        w.start_unix_ns = (kDayStart + 20 * static_cast<std::int64_t>(i)) * 1'000'000'000;
        w.end_unix_ns = w.start_unix_ns + 2'000'000'000;
        w.busy_ns = 1'800'000'000;
        w.idle_ns = 200'000'000;
        for (std::size_t k = 0; k < 10; ++k)
          w.top.push_back({names[(i + k) % names.size()], 40, 10'000'000 * (k + 1)});
        w.other_kernels = 25;
        w.other_launches = 300;
        w.other_ns = 90'000'000;
        w.collectives = {12, 0, 150'000'000};
        w.copies = {30, 1 << 20, 4'000'000};
        s->add(std::move(w));
      }
    }
    return s;
  }();
  return *store;
}

void BM_KernelSummaryDay8Gpus(benchmark::State& state) {
  const agent::KernelStore& store = day_of_eight_gpus();
  const agent::KernelQuery q{
      static_cast<double>(kDayStart), static_cast<double>(kDayStart) + 86400, {}, {}, 0};
  const auto top = static_cast<std::size_t>(state.range(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string body =
        kernel_totals_json(agent::total_kernels_by_process(store, q, top), q.from, q.to, top)
            .dump();
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  if (bytes >= std::size_t{64} << 10) state.SkipWithError("the summary is 64 KiB or more");
  state.counters["windows"] = static_cast<double>(store.size());
  state.counters["bytes"] = static_cast<double>(bytes);
  state.SetLabel(fmt::format("top {}", top));
}
BENCHMARK(BM_KernelSummaryDay8Gpus)->Arg(6)->Arg(32)->Unit(benchmark::kMillisecond);

// What the dashboard fetched before: the newest 10,000 windows of the day as JSON.
void BM_KernelWindowsJson10k(benchmark::State& state) {
  const agent::KernelStore& store = day_of_eight_gpus();
  const agent::KernelQuery q{
      static_cast<double>(kDayStart), static_cast<double>(kDayStart) + 86400, {}, {}, 10000};
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string body = kernels_json(store.query(q), q.from, q.to).dump();
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_KernelWindowsJson10k)->Unit(benchmark::kMillisecond);

// ?limit=N of /api/v1/kernels, the store's part (all of it under the store's
// lock): before issue 47 every window of the range was copied, then cut to the
// newest N; now only pointers to the newest N are kept while walking, and those
// N (at most kMaxKernelAnswerBytes of them) copied.
void BM_KernelWindowsQuery(benchmark::State& state) {
  const agent::KernelStore& store = day_of_eight_gpus();
  const agent::KernelQuery q{static_cast<double>(kDayStart),
                             static_cast<double>(kDayStart) + 86400,
                             {},
                             {},
                             static_cast<std::size_t>(state.range(0))};
  std::size_t windows = 0;
  for (auto _ : state) {
    const auto r = store.query(q);
    windows = r.windows.size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["windows"] = static_cast<double>(windows);
}
BENCHMARK(BM_KernelWindowsQuery)->Arg(1)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpulens::exposition

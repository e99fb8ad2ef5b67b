// SPDX-License-Identifier: Apache-2.0
#include "nvml_probe/gpm_costs.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>

#include "nvml_probe/timing.hpp"

namespace gpulens::probe {
namespace {

// 15 GPM metrics, as many as the sampler reads (its list: kWanted in
// src/sources/nvml/nvml_gpm.cpp); one call costs the same for 1 metric or 15.
constexpr std::array<unsigned, 15> kMetricIds = {1,  2,  3,  5,  6,  7,  9, 10,
                                                 11, 12, 13, 20, 21, 60, 61};

// One GPU's pair of GPM samples, refreshed in turn as the sampler refreshes them.
struct GpmPair {
  sources::nvml::Device dev = nullptr;
  sources::nvml::GpmSample a = nullptr, b = nullptr;
  std::unique_ptr<sources::nvml::GpmMetricsGet> request =
      std::make_unique<sources::nvml::GpmMetricsGet>();

  // A fresh sample and the 15 metrics since the last one; the thread's CPU seconds.
  double refresh(const sources::NvmlApi& api) {
    const double cpu0 = thread_cpu_s();
    api.gpmSampleGet(dev, b);
    request->version = sources::nvml::kGpmMetricsGetVersion;
    request->numMetrics = static_cast<unsigned>(kMetricIds.size());
    request->sample1 = a;
    request->sample2 = b;
    for (unsigned k = 0; k < kMetricIds.size(); ++k) request->metrics[k].metricId = kMetricIds[k];
    api.gpmMetricsGet(request.get());
    std::swap(a, b);
    return thread_cpu_s() - cpu0;
  }
};

}  // namespace

void print_gpm_call_costs(const sources::NvmlApi& api, sources::nvml::Device dev, int reps) {
  sources::nvml::GpmSample a = nullptr;
  sources::nvml::GpmSample b = nullptr;
  api.gpmSampleAlloc(&a);
  api.gpmSampleAlloc(&b);
  api.gpmSampleGet(dev, a);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  time_call("nvmlGpmSampleGet", reps, [&] { return api.gpmSampleGet(dev, b); });
  auto request = std::make_unique<sources::nvml::GpmMetricsGet>();
  for (unsigned ids : {1U, 15U}) {
    const std::string name = "nvmlGpmMetricsGet(" + std::to_string(ids) + " metrics)";
    time_call(name.c_str(), reps, [&] {
      request->version = sources::nvml::kGpmMetricsGetVersion;
      request->numMetrics = ids;
      request->sample1 = a;
      request->sample2 = b;
      for (unsigned k = 0; k < ids; ++k) request->metrics[k].metricId = kMetricIds[k];
      return api.gpmMetricsGet(request.get());
    });
  }
  // As the sampler runs: a fresh sample 100 ms after the last, then the metrics of
  // the pair. The tight loop above reuses one pair, which NVML may answer faster.
  GpmPair pair{dev, a, b};
  const int fresh_reps = std::min(reps, 20);
  double cpu = 0;
  for (int k = 0; k < fresh_reps; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cpu += pair.refresh(api);
  }
  const nlohmann::json j = {{"call", "nvmlGpmSampleGet+MetricsGet(15), fresh 100 ms apart"},
                            {"cpu_us", cpu * 1e6 / fresh_reps}};
  std::printf("%s\n", j.dump().c_str());
  a = pair.a;
  b = pair.b;
  api.gpmSampleFree(a);
  api.gpmSampleFree(b);
}

int gpm_fanout(int rounds, const std::vector<int>& only) {
  auto loaded = sources::load_nvml_library();
  if (!loaded) {
    std::fprintf(stderr, "gpulens_nvml_probe: %s\n", loaded.error().message.c_str());
    return 1;
  }
  const sources::NvmlApi& api = *loaded;
  unsigned count = 0;
  if (api.init_v2() != sources::nvml::Return::Success ||
      api.deviceGetCount_v2(&count) != sources::nvml::Return::Success || count == 0) {
    std::fprintf(stderr, "gpulens_nvml_probe: no GPU\n");
    return 1;
  }
  if (!api.has_gpm()) {
    std::fprintf(stderr, "gpulens_nvml_probe: this NVML has no GPM functions (driver too old)\n");
    return 1;
  }
  std::vector<unsigned> indexes;  // --gpus, else every GPU
  for (unsigned i = 0; i < count; ++i) {
    if (only.empty() || std::find(only.begin(), only.end(), static_cast<int>(i)) != only.end()) {
      indexes.push_back(i);
    }
  }
  if (indexes.empty()) {
    std::fprintf(stderr, "gpulens_nvml_probe: --gpus names no GPU of the %u here\n", count);
    return 1;
  }
  std::vector<GpmPair> gpus(indexes.size());
  for (std::size_t k = 0; k < indexes.size(); ++k) {
    const unsigned i = indexes[k];
    GpmPair& g = gpus[k];
    sources::nvml::GpmSupport support{};
    support.version = sources::nvml::kGpmSupportVersion;
    if (api.deviceGetHandleByIndex_v2(i, &g.dev) != sources::nvml::Return::Success ||
        api.gpmQueryDeviceSupport(g.dev, &support) != sources::nvml::Return::Success ||
        !support.isSupportedDevice || api.gpmSampleAlloc(&g.a) != sources::nvml::Return::Success ||
        api.gpmSampleAlloc(&g.b) != sources::nvml::Return::Success ||
        api.gpmSampleGet(g.dev, g.a) != sources::nvml::Return::Success) {
      std::fprintf(stderr, "gpulens_nvml_probe: GPU %u has no GPM (Hopper or newer needed)\n", i);
      return 1;
    }
  }
  const auto print = [&](const char* way, std::size_t n, double cpu_s, double wall_s) {
    const nlohmann::json j = {{"gpm_fanout", way},
                              {"gpus", n},
                              {"rounds", rounds},
                              {"cpu_us_per_gpu", cpu_s * 1e6 / (rounds * static_cast<double>(n))},
                              {"wall_us_per_round", wall_s * 1e6 / rounds}};
    std::printf("%s\n", j.dump().c_str());
  };
  using clock = std::chrono::steady_clock;
  const auto seconds = [](clock::duration d) { return std::chrono::duration<double>(d).count(); };
  {  // the first GPU alone
    double cpu = 0, wall = 0;
    for (int r = 0; r < rounds; ++r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const auto t0 = clock::now();
      cpu += gpus[0].refresh(api);
      wall += seconds(clock::now() - t0);
    }
    print("alone", 1, cpu, wall);
  }
  {  // every GPU, one after another, on this thread
    double cpu = 0, wall = 0;
    for (int r = 0; r < rounds; ++r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const auto t0 = clock::now();
      for (auto& g : gpus) cpu += g.refresh(api);
      wall += seconds(clock::now() - t0);
    }
    print("serial", gpus.size(), cpu, wall);
  }
  {  // every GPU at once, one thread each
    double cpu = 0, wall = 0;
    std::vector<double> per(gpus.size());
    for (int r = 0; r < rounds; ++r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const auto t0 = clock::now();
      std::vector<std::thread> workers;
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        workers.emplace_back([&, i] { per[i] = gpus[i].refresh(api); });
      }
      for (auto& w : workers) w.join();
      wall += seconds(clock::now() - t0);
      for (double c : per) cpu += c;
    }
    print("parallel", gpus.size(), cpu, wall);
  }
  for (auto& g : gpus) {
    api.gpmSampleFree(g.a);
    api.gpmSampleFree(g.b);
  }
  api.shutdown();
  return 0;
}

}  // namespace gpulens::probe

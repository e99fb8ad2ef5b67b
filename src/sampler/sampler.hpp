// SPDX-License-Identifier: Apache-2.0
#pragma once
// The live sampler: ticks on a fixed schedule (no drift), one worker thread per
// GPU so that a hung or slow NVML call on one device never freezes the others or
// the program, host readings from /proc, and marks from a workload's marks file.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/clock.hpp"
#include "core/marks_tail.hpp"
#include "sources/gpu_collector.hpp"
#include "sources/host/host_collector.hpp"
#include "sources/host/slurm_allocations.hpp"
#include "sources/kube/kube_allocations.hpp"
#include "sources/tick_source.hpp"

namespace gpulens::sampler {

struct SamplerOptions {
  double interval_s = 1.0;
  sources::HostOptions host;
  std::string marks_path;  // empty = none
  // How long a tick waits for a GPU before reporting it unresponsive; by default
  // 90 % of the interval (at least 50 ms).
  std::optional<double> gpu_timeout_s;
  // Which Slurm job holds which GPU, from the prolog's entries; dir empty: not read.
  sources::SlurmAllocationOptions slurm_allocations;
  // Which pod holds which GPU, from the kubelet; socket empty: not read.
  sources::kube::KubeAllocationOptions kube_allocations;
};

class Sampler final : public sources::TickSource {
 public:
  Sampler(std::shared_ptr<sources::GpuCollector> collector, SamplerOptions options);
  ~Sampler() override;
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  const TraceHeader& header() const override { return header_; }
  Result<std::optional<Tick>> next() override;
  void stop() override;
  bool live() const override { return true; }
  std::optional<sources::SamplerStats> stats() const override;
  // Says how many readings the driver gave outside their physical range (dropped).
  std::vector<std::string> warnings() const override;

 private:
  struct Worker;
  bool sleep_until(std::chrono::steady_clock::time_point due);
  bool request(Worker& w);
  void collect_devices(Tick& tick);
  void add_host_readings(Tick& tick);
  void add_events_and_marks(Tick& tick);

  std::shared_ptr<sources::GpuCollector> collector_;
  SamplerOptions options_;
  TraceHeader header_;
  sources::HostCollector host_;
  std::optional<MarksTail> marks_;
  std::optional<sources::SlurmAllocationReader> allocations_;
  std::unique_ptr<sources::kube::KubeAllocationReader> kube_allocations_;
  std::vector<std::shared_ptr<Worker>> workers_;
  std::chrono::steady_clock::time_point start_;
  std::uint64_t slot_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stopped_ = false;
  sources::SamplerStats stats_;
};

}  // namespace gpulens::sampler

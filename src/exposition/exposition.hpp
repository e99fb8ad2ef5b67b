// SPDX-License-Identifier: Apache-2.0
#pragma once
// /metrics: the snapshot in the Prometheus text format, under gpulens' own
// names (gpulens_<what>_<unit>, base units) and, with --compat dcgm, also under
// dcgm-exporter's names, labels and units. Pure functions of their inputs.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/kernel_receiver.hpp"
#include "agent/snapshot.hpp"
#include "store/store_writer.hpp"

namespace gpulens::exposition {

struct GpuPrice {
  double per_hour = 0;
  std::string currency;  // ISO 4217 code, e.g. "USD"
};

struct ExpositionOptions {
  bool native = true;
  bool dcgm = false;             // also dcgm-exporter's names
  bool process_metrics = false;  // per-process series (opt-in: cardinality)
  // The price of one GPU-hour of a device, by its NVML name: exported per GPU as
  // a gauge so that PromQL turns idle GPU-seconds into money without a copy of
  // the price in every rule file. Set by the front end (the config's price, else
  // the price table of `gpulens report`); empty or nullopt: no gauge.
  std::function<std::optional<GpuPrice>(const std::string& device_name)> price_of;
};

// The per-GPU kernel counters at scrape time (agent/kernel_series.hpp).
struct KernelSeriesStatus {
  std::vector<agent::KernelSeriesRow> rows;
  std::uint64_t retired = 0;  // named series dropped so far
};

struct HttpCount {
  std::string handler;
  int code = 200;
  std::uint64_t count = 0;
};

// The agent's own health beyond the snapshot, gathered by the HTTP handler.
struct SelfStats {
  std::optional<store::StoreStatus> store;  // nullopt: history disabled
  std::vector<HttpCount> http;
  double last_scrape_s = 0;  // how long the previous /metrics took to render
  std::optional<double> rss_bytes;
  std::optional<double> cpu_seconds;
  std::optional<double> start_time;
  std::optional<agent::KernelIntakeStatus> kernels;  // nullopt: --kernels-socket not given
  std::optional<KernelSeriesStatus> kernel_series;   // likewise
};

std::string render_metrics(const agent::LiveSnapshot& snap, const ExpositionOptions& options,
                           const SelfStats& self);

// The parts, for tests and benchmarks.
void render_gpu_metrics(std::string& out, const agent::LiveSnapshot& snap);
void render_diagnosis_metrics(std::string& out, const agent::LiveSnapshot& snap);
void render_process_metrics(std::string& out, const agent::LiveSnapshot& snap);
// gpulens_gpu_allocated and gpulens_gpu_allocation_info: the scheduler's jobs per GPU.
void render_allocation_metrics(std::string& out, const agent::LiveSnapshot& snap);
void render_self_metrics(std::string& out, const agent::LiveSnapshot& snap, const SelfStats& self);
void render_dcgm_metrics(std::string& out, const agent::LiveSnapshot& snap);
// gpulens_kernel_*_seconds_total: the jobs' kernel summaries per GPU and pod.
void render_kernel_metrics(std::string& out, const agent::LiveSnapshot& snap,
                           const KernelSeriesStatus& series);

// The gpu/uuid/model/hostname labels of a GPU, rendered, and namespace/pod/
// container when exactly one pod holds the GPU (docs/fleet.md: the target-label clash).
std::string gpu_labels(const agent::LiveSnapshot& snap, const agent::GpuLive& gpu);
// Without the pod labels: for series that carry each process's own pod labels.
std::string gpu_identity_labels(const agent::LiveSnapshot& snap, const agent::GpuLive& gpu);

// The one pod whose processes run on the GPU; nullopt with none or several.
std::optional<sources::KubeRef> single_pod_of_gpu(const agent::LiveSnapshot& snap,
                                                  const agent::GpuLive& gpu);

// The price gauge (gpulens_gpu_price_per_hour), one series per GPU whose price
// is known; nothing for the others.
void render_price_metrics(std::string& out, const agent::LiveSnapshot& snap,
                          const ExpositionOptions& options);

}  // namespace gpulens::exposition

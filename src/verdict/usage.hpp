// SPDX-License-Identifier: Apache-2.0
#pragma once
// How much of the GPU time a job held was used, measured from a trace's samples:
// the utilization funnel (allocated -> kernel-active -> SM-active -> tensor-active,
// Modal's framing in design.md), energy, and the tensor activity the hardware MFU
// estimate rests on. Pure: samples in, numbers out.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/trace_reader.hpp"

namespace gpulens::verdict {

// A time-weighted mean built as GPU-seconds of activity over measured seconds, so
// that GPUs and windows combine by adding, and a metric measured on part of the
// samples is judged on those samples only.
struct Weighted {
  double active_s = 0;    // sum of dt x value (0..1)
  double measured_s = 0;  // sum of dt over samples that had the value
  void add(double dt, double ratio) {
    active_s += dt * ratio;
    measured_s += dt;
  }
  std::optional<double> ratio() const;
  Weighted& operator+=(const Weighted& o) {
    active_s += o.active_s;
    measured_s += o.measured_s;
    return *this;
  }
};

// What "a process holds the GPU" was judged from, best first.
enum class AllocatedBasis { Scheduler, Processes, Memory, Activity };
std::string_view allocated_basis_id(AllocatedBasis basis);

struct GpuUsage {
  int gpu = 0;
  std::string name;
  double covered_s = 0;           // time the samples describe (each covers its interval)
  std::optional<double> first_t;  // start of the first sample's interval
  std::optional<double> last_t;
  Weighted allocated, kernel, sm, tensor, dram;
  // tensor activity x (SM clock / the clock at which the dense peak holds).
  Weighted tensor_at_peak_clock;
  bool clock_corrected = false;  // the peak clock and SM clocks were known
  AllocatedBasis allocated_basis = AllocatedBasis::Activity;
  // Time whose samples carry a scheduler's allocation (Slurm's prolog, the
  // kubelet's pod-resources API); the rest fell back to processes.
  double scheduler_s = 0;
  std::optional<double> energy_j;
  std::string energy_basis;  // "energy counter" or "power integral"
  std::optional<double> mean_power_w;
  std::optional<double> peak_mem_mib;
};

struct UsageOptions {
  std::optional<double> from;  // only samples whose interval ends in [from, to]
  std::optional<double> to;
  std::map<int, double> peak_clock_mhz;  // per GPU, for the tensor estimate
  // Without process lists, memory above this counts as a process holding the GPU:
  // the driver alone keeps about 0.5 GiB in use, a CUDA context adds about 0.5 GiB.
  double held_memory_mib = 1024;
};

// One entry per GPU in `gpus` (in that order), even when it sent no sample.
std::vector<GpuUsage> measure_usage(const Trace& trace, const std::vector<int>& gpus,
                                    const UsageOptions& options = {});

// The whole job: per-GPU figures added up.
GpuUsage total_usage(const std::vector<GpuUsage>& gpus);

struct FunnelStep {
  std::string id;     // "allocated", "kernel_active", "sm_active", "tensor_active"
  std::string label;  // "kernel-active"
  std::string meaning;
  std::optional<double> share;        // of paid GPU time, 0..1; nullopt = not measured
  std::optional<double> gpu_hours;    // share x paid GPU-hours
  std::optional<double> of_previous;  // share of the step before, 0..1
  std::string basis;                  // what it was measured from
};

struct Funnel {
  double paid_gpu_hours = 0;
  std::vector<FunnelStep> steps;
  const FunnelStep* step(const std::string& id) const;
};

Funnel build_funnel(const GpuUsage& total, double paid_gpu_hours);

}  // namespace gpulens::verdict

// SPDX-License-Identifier: Apache-2.0
#pragma once
// A sliding window of one GPU's samples and the statistics the classifier reads.
// The window restarts at a level shift (a new regime) so that a state follows a
// change within about a second instead of after a whole window of mixed samples.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "core/sample.hpp"
#include "diagnosis/hardware.hpp"

namespace gpulens::diagnosis {

struct WindowSettings {
  double length_s = 5.0;
  // A restart needs the new level to have held this long...
  double change_min_s = 1.0;
  // ...and to differ from everything before it by this many points (%, or % of
  // link bandwidth) in utilization, SM, DRAM, tensor, PCIe or NVLink activity.
  double change_min_shift = 20.0;
};

// The processes on the GPU at the newest sample.
struct ProcessSummary {
  bool known = false;  // processes were sampled (an empty list is known: none)
  std::size_t count = 0;
  std::optional<double> used_mib;  // summed over processes that report it
  std::string top_mem_name;        // the process holding the most device memory
  std::uint32_t top_mem_pid = 0;
  std::optional<double> top_mem_mib;
  std::string top_cpu_name;  // the process using the most host CPU
  std::uint32_t top_cpu_pid = 0;
  std::optional<double> top_cpu_pct;  // 100 = one full core
  std::optional<double> cpu_pct;      // summed over the processes that report it
  // The same over the processes of every GPU of the host (the engine fills it
  // in; a process on two GPUs counts twice): the other ranks of a job are
  // processes of the host's GPUs, not work the GPU waits on.
  std::optional<double> host_gpus_cpu_pct;
};

struct WindowStats {
  int gpu = 0;
  double start = 0;      // t of the oldest sample in the window
  double end = 0;        // t of the newest
  double covered_s = 0;  // time the samples describe (each covers its interval)
  std::size_t samples = 0;
  MetricValues mean;
  MetricValues min;
  MetricValues max;
  MetricValues last;
  // Share of samples in which a kernel ran (utilization or SM activity at or
  // above the counters' 1 % floor): tells tiny kernels launched back to back
  // (nearly every sample) from a few blips on an idle GPU.
  double kernel_sample_share = 0;
  std::size_t empty_gpm_intervals = 0;  // samples whose GPM interval came back empty
  double throttle_share = 0;            // share of samples with a power/thermal reason
  std::uint64_t throttle_reasons = 0;   // those reasons, OR-ed over the window
  ProcessSummary procs;

  std::optional<double> get(Metric m) const { return mean.get(m); }
};

class SampleWindow {
 public:
  SampleWindow(WindowSettings settings, HardwareLimits limits);

  // Adds a sample (same GPU, non-decreasing t), evicts old ones, restarts the
  // window at a level shift, and recomputes stats(). The GPM metrics of an empty
  // GPM interval (core/gpm_interval.hpp) are ignored: they are not zeros.
  void push(const Sample& sample);
  // Forgets everything: a phase mark says the workload changed.
  void reset();

  const WindowStats& stats() const { return stats_; }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  std::size_t restarts() const { return restarts_; }
  const HardwareLimits& limits() const { return limits_; }

 private:
  struct Entry {
    double t;
    MetricValues values;
    bool empty_gpm = false;
  };
  // Signature components the level-shift test compares, in points.
  static constexpr std::size_t kSignature = 6;
  using Signature = std::array<std::optional<double>, kSignature>;
  Signature signature(const MetricValues& v) const;
  void cut_at_level_shift();
  void recompute();

  WindowSettings settings_;
  HardwareLimits limits_;
  std::deque<Entry> entries_;
  std::size_t restarts_ = 0;
  double procs_t_ = 0;  // when the processes were last listed
  WindowStats stats_;
};

ProcessSummary summarize_processes(const Sample& sample);

}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Sample model: what one GPU's counters said over one interval. Every source
// (live NVML, trace replay) produces it and every front end consumes it.
#include <array>
#include <bitset>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/metric.hpp"

namespace gpulens {

// Metric values with "not measured" as a first-class state, never 0.
class MetricValues {
 public:
  std::optional<double> get(Metric m) const {
    const auto i = index_of(m);
    if (!present_[i]) return std::nullopt;
    return values_[i];
  }
  bool has(Metric m) const { return present_[index_of(m)]; }
  void set(Metric m, double v) {
    values_[index_of(m)] = v;
    present_[index_of(m)] = true;
  }
  void set(Metric m, std::optional<double> v) {
    if (v)
      set(m, *v);
    else
      clear(m);
  }
  void clear(Metric m) { present_[index_of(m)] = false; }
  // Value or a fallback, for arithmetic where the caller already checked presence.
  double value_or(Metric m, double fallback) const {
    return has(m) ? values_[index_of(m)] : fallback;
  }
  bool empty() const { return present_.none(); }
  bool operator==(const MetricValues& other) const = default;

 private:
  std::array<double, kMetricCount> values_{};
  std::bitset<kMetricCount> present_;
};

// {"sm_active": 41.5, ...}: every measured metric by its trace key, rounded to
// decimals::kReading (core/json_number.hpp); an absent one is left out.
void to_json(nlohmann::ordered_json& j, const MetricValues& values);

// The Slurm job a process belongs to (docs/slurm.md): from Slurm's cgroup and the
// process's SLURM_* environment. Ids are kept as the decimal text Slurm prints.
struct SlurmJob {
  std::string job;         // SLURM_JOB_ID / cgroup job_<id>; empty when unknown
  std::string step;        // "0", "batch", "extern", "interactive"; empty when unknown
  std::string user;        // the job's user: cgroup uid_<n>, SLURM_JOB_USER, else the uid's
  std::string account;     // SLURM_JOB_ACCOUNT; empty when unknown
  std::string array_job;   // SLURM_ARRAY_JOB_ID; empty outside a job array
  std::string array_task;  // SLURM_ARRAY_TASK_ID
  // "cgroup" when Slurm's cgroup names the job (the environment cannot forge it),
  // "environ" when only the process's environment does.
  std::string from;
  // Why the job is not known although the process shows signs of Slurm (a malformed
  // SLURM_JOB_ID, a cgroup path of an unknown layout); empty when `job` is set.
  std::string unknown;
  bool operator==(const SlurmJob&) const = default;
};

struct ProcessSample {
  std::uint32_t pid = 0;
  std::string name;                   // short command name (comm); empty when unknown
  std::optional<double> used_mib;     // device memory held on this GPU
  std::optional<double> sm_util;      // % of the GPU's SM time (NVML per-process utilization)
  std::optional<double> cpu_pct;      // host CPU, 100 = one full core
  std::optional<double> rss_mib;      // host resident memory
  std::string user;                   // empty when unknown
  std::string container;              // container ID, empty when not in one
  std::string pod;                    // Kubernetes pod UID, empty when not in one
  std::string cmdline;                // full command line; empty unless asked for
  std::optional<std::uint32_t> ppid;  // parent PID, for grouping processes into jobs
  std::optional<SlurmJob> slurm;      // nullopt: no sign of Slurm
  // Who the process is, from /proc when the host source could read it; live only,
  // never written to a recording. The agent takes a kernel summary from this pid
  // only from a sender with this uid and start time (docs/kernels-agent.md): a pid
  // reused after the job ended is another process.
  std::optional<std::uint32_t> uid;          // real uid
  std::optional<std::uint64_t> start_ticks;  // start time, clock ticks since boot
  bool operator==(const ProcessSample&) const = default;
};

// A scheduler's record that a job holds a GPU, whether or not any process of the
// job runs on it: the prolog's entry for a Slurm job (docs/slurm.md, "Allocation"),
// the kubelet's pod-resources answer for a pod's container (docs/kubernetes.md).
struct GpuAllocation {
  std::string scheduler;        // "slurm" or "kubernetes"
  std::string job;              // Slurm: decimal id as Slurm prints it
  std::string user;             // Slurm: empty when unknown
  std::string account;          // Slurm: empty when unknown
  std::string partition;        // Slurm: empty when unknown
  std::optional<double> since;  // Slurm: Unix seconds the prolog ran; nullopt when unknown
  std::string namespace_name;   // Kubernetes: the pod's namespace
  std::string pod;              // Kubernetes: the pod's name
  std::string container;        // Kubernetes: the container the device is assigned to
  bool operator==(const GpuAllocation&) const = default;
};

struct Sample {
  double t = 0;  // Unix seconds at the end of the interval this sample describes
  int gpu = 0;   // device index (header's devices[].index)
  MetricValues values;
  // nullopt: processes were not sampled; an empty vector: sampled, none running.
  std::optional<std::vector<ProcessSample>> procs;
  // nullopt: no scheduler's allocation was read (none configured, or it fell back);
  // an empty vector: read, and no job holds this GPU.
  std::optional<std::vector<GpuAllocation>> allocations;
  // Keys a reader did not know, kept so that replay -> record loses nothing.
  nlohmann::json extra = nlohmann::json::object();

  std::optional<double> get(Metric m) const { return values.get(m); }
};

// A label of what the workload was doing: "train:start"/"train:end" bound a phase,
// a mark without a suffix is a point event (e.g. "step" with "flops").
struct Mark {
  double t = 0;
  std::string name;
  nlohmann::json fields = nlohmann::json::object();  // everything but t and mark
};

// Why a metric is absent on a device, probed once (e.g. "n/a: GPM needs Hopper or newer").
struct Unsupported {
  Metric metric;
  std::string reason;
};

struct DeviceInfo {
  int index = 0;
  std::string uuid;
  std::string name;
  std::string architecture;  // "Hopper", "Ampere", ...; empty when unknown
  std::optional<int> sm_count;
  std::optional<double> mem_total_mib;
  std::optional<double> power_limit_w;
  std::optional<double> max_sm_clock_mhz;
  std::optional<double> max_mem_clock_mhz;
  std::optional<int> pcie_gen;
  std::optional<int> pcie_width;
  std::optional<bool> mig_enabled;
  std::optional<int> nvlink_count;  // active NVLink links
  std::vector<Unsupported> unsupported;
  nlohmann::json extra = nlohmann::json::object();

  // The reason a metric is absent, or nullptr when it is expected to be present.
  const std::string* unsupported_reason(Metric m) const {
    for (const auto& u : unsupported) {
      if (u.metric == m) return &u.reason;
    }
    return nullptr;
  }
};

struct TraceHeader {
  std::string host;
  std::string driver;
  std::optional<int> cpu_count;
  std::optional<double> interval_s;
  std::vector<DeviceInfo> devices;
  nlohmann::json extra = nlohmann::json::object();

  const DeviceInfo* device(int index) const {
    for (const auto& d : devices) {
      if (d.index == index) return &d;
    }
    return nullptr;
  }
};

// Everything that happened at one tick: one sample per GPU plus any marks.
struct Tick {
  double t = 0;
  std::vector<Sample> samples;
  std::vector<Mark> marks;
};

}  // namespace gpulens

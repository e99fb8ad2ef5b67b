// SPDX-License-Identifier: Apache-2.0
#pragma once
// The hardware seam: one implementation per vendor/API (today: NVML + GPM, and
// DCGM wrapped around it for the GPUs whose GPM is absent, sources/dcgm/).
// A collector probes capabilities once at open and then fills Samples per tick.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"

namespace gpulens::sources {

// CPU time spent per part of one device's sample, in seconds of thread CPU time.
// Summed by the sampler and reported by `record --stats` and the agent's self-metrics.
struct CollectCost {
  double classic_s = 0;  // utilization, memory, power, clocks, temperature, ...
  double slow_s = 0;     // counters read every few seconds or minutes (energy, links)
  double gpm_s = 0;      // nvmlGpmSampleGet + nvmlGpmMetricsGet
  double procs_s = 0;    // running processes and their SM share
  double procfs_s = 0;   // /proc reads for those processes (filled by the sampler)
  double total_s() const { return classic_s + slow_s + gpm_s + procs_s + procfs_s; }
  CollectCost& operator+=(const CollectCost& o) {
    classic_s += o.classic_s;
    slow_s += o.slow_s;
    gpm_s += o.gpm_s;
    procs_s += o.procs_s;
    procfs_s += o.procfs_s;
    return *this;
  }
};

// Something a device reported between ticks.
struct DeviceEvent {
  enum class Kind { Xid, Lost };
  Kind kind = Kind::Xid;
  double t = 0;
  int gpu = 0;
  std::int64_t xid = 0;  // for Kind::Xid
  std::string detail;
};

// Where the profiling counters of GPUs without GPM come from, and how that goes
// (docs/dcgm.md): shown by /api/v1/health and `record --stats`.
struct ProfilerStatus {
  std::string source;              // "dcgm"
  std::string state;               // "watching", "reconnecting", "unavailable"
  std::string detail;              // why, in words; empty while watching everything asked
  std::string address;             // the host engine's address, or "embedded"
  std::vector<int> gpus;           // the GPUs (device indices) it serves
  std::vector<std::string> notes;  // what it cannot read and why, said once each
  std::uint64_t sessions = 0;      // sessions opened (a reconnect opens one more)
  std::uint64_t lost = 0;          // sessions lost mid-run
  std::uint64_t blank_values = 0;  // values DCGM returned blank or with an error status
  std::uint64_t stale_values = 0;  // values older than the staleness bound
  bool operator==(const ProfilerStatus&) const = default;
};

class GpuCollector {
 public:
  virtual ~GpuCollector() = default;
  virtual std::string driver_version() const = 0;
  virtual const std::vector<DeviceInfo>& devices() const = 0;
  // Fills out.values (and out.procs with pid/used_mib/sm_util when processes are
  // enabled) for devices()[slot]. Must be safe to call concurrently for different
  // slots. Never throws; a failing call leaves the metric absent.
  virtual void sample(std::size_t slot, Sample& out, CollectCost& cost) = 0;
  // Events (XID errors, GPUs that fell off the bus) since the last call; non-blocking.
  virtual std::vector<DeviceEvent> poll_events() = 0;
  // Where the profiling counters of GPUs without GPM come from; nullopt: nowhere else.
  virtual std::optional<ProfilerStatus> profiler_status() const { return std::nullopt; }
};

}  // namespace gpulens::sources

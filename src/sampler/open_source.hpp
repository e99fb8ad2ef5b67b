// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which TickSource a front end gets: a replayed trace, or the live sampler over NVML.
#include <memory>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "sources/tick_source.hpp"

namespace gpulens::sampler {

struct SourceOptions {
  std::string replay;       // trace file; empty = live
  double speed = 1.0;       // replay pacing: 1 real time, X faster, 0 as fast as possible
  bool lenient = false;     // replay: skip malformed lines
  double interval_s = 1.0;  // live sampling interval
  std::vector<int> gpus;    // empty = all
  bool gpm = true;          // live: read GPM metrics where supported
  bool processes = true;    // live: list processes on each GPU
  // live: seconds between reads of each process's SM share (a ~2 ms driver call)
  double process_util_every_s = 5.0;
  bool cmdline = false;  // live: include process command lines
  std::string procfs = "/proc";
  // live: the Slurm prolog's allocation entries (docs/slurm.md); empty: not read
  std::string slurm_allocations = "/run/gpulens/slurm-jobs";
  // live: the kubelet's pod-resources socket (docs/kubernetes.md); empty: not read
  std::string pod_resources = "/var/lib/kubelet/pod-resources/kubelet.sock";
  double pod_resources_every_s = 5;  // live: seconds between its calls
  std::string marks_path;            // live: JSON-lines marks file to merge into ticks
  // live: where GPUs without GPM get their profiling counters (docs/dcgm.md): auto,
  // off, embedded, or a host engine's HOST[:PORT] or socket path
  std::string dcgm = "auto";
};

// Opens a replay source when options.replay is set, else the live NVML sampler.
Result<std::unique_ptr<sources::TickSource>> open_tick_source(const SourceOptions& options);

}  // namespace gpulens::sampler

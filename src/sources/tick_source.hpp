// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every front end reads: ticks from a live sampler or a replayed trace.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/sample.hpp"
#include "sources/gpu_collector.hpp"
#include "sources/host/slurm_allocations.hpp"
#include "sources/host/slurm_attribution.hpp"

namespace gpulens::sources {

// What sampling cost, counted by the live sampler.
struct SamplerStats {
  std::uint64_t ticks = 0;
  std::uint64_t gpu_samples = 0;        // device samples collected (ticks x GPUs, less timeouts)
  std::uint64_t timeouts = 0;           // device samples that did not answer in time
  std::uint64_t missed_ticks = 0;       // schedule slots skipped because a tick overran
  std::uint64_t out_of_range = 0;       // readings outside their physical range, dropped
  CollectCost cost;                     // thread CPU time summed over all device samples
  double host_s = 0;                    // thread CPU time reading /proc/stat
  double events_s = 0;                  // thread CPU time polling XID events and the marks file
  SlurmProblemCounts slurm_problems{};  // processes whose Slurm job could not be told, by why
  // The last read of the Slurm prolog's allocations; null when not configured.
  std::shared_ptr<const AllocationScan> allocations;
  // The last answer of the kubelet's pod-resources API; null when not configured.
  std::shared_ptr<const AllocationScan> kube_allocations;
  // Where GPUs without GPM get their profiling counters (DCGM); nullopt: nowhere.
  std::optional<ProfilerStatus> profiler;
};

class TickSource {
 public:
  virtual ~TickSource() = default;
  virtual const TraceHeader& header() const = 0;
  // Blocks until the next tick is due and returns it; nullopt at the end (trace
  // finished, --count reached, or stop() called). Errors name their cause.
  virtual Result<std::optional<Tick>> next() = 0;
  // Asks a blocked next() to return soon; safe from a signal-handling thread.
  virtual void stop() = 0;
  // Whether ticks come from live hardware (as opposed to a recording).
  virtual bool live() const = 0;
  // What went wrong without stopping the ticks (a replay's truncated last line,
  // skipped lines); complete once next() has returned nullopt.
  virtual std::vector<std::string> warnings() const { return {}; }
  // The sampler's own cost; nullopt for a source that samples nothing (a replay).
  virtual std::optional<SamplerStats> stats() const { return std::nullopt; }
};

}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
#pragma once
// "Kernel launches" of a report: a recording's launch records (one per process of
// a `gpulens run`, kernels/record/launch_record.hpp) summed over the job, with each
// process put on the GPUs the recording saw it use. Counts, not time: which kernels a
// job launched most, and how many launches a second each GPU was fed (docs/kernels.md,
// "Launch counts").
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/trace_reader.hpp"
#include "kernels/record/launch_record.hpp"

namespace gpulens::kernels {

struct ProcessLaunchCounts {
  std::uint32_t pid = 0;
  std::string comm;
  std::vector<int> gpus;  // the GPUs the recording saw it on; empty: none seen
  std::uint64_t kernel_launches = 0;
  std::uint64_t graph_launches = 0;
  double seconds = 0;  // from its first launch to its last count
  bool final = false;  // false: it ended without its exit handlers (counts to its last write)
};

struct GpuLaunchRate {
  int gpu = 0;
  std::uint64_t launches = 0;  // kernel and graph launches of the processes seen on it
  double per_second = 0;       // over the recording's span
};

struct LaunchCounts {
  std::uint64_t kernel_launches = 0;
  std::uint64_t graph_launches = 0;
  std::uint64_t graphs = 0;
  std::uint64_t unlisted_launches = 0;         // kernel launches no record names
  double span_s = 0;                           // the recording's, for the rates
  std::vector<KernelLaunches> top;             // summed by name over the processes, most first
  std::vector<ProcessLaunchCounts> processes;  // most launches first
  std::vector<GpuLaunchRate> gpus;             // by GPU index
  std::vector<std::string> notes;              // records refused, processes that ended without exit
};

inline constexpr std::size_t kTopLaunchedKernels = 10;

// Nullopt-like empty result when `records` is empty; each refused record is a note.
LaunchCounts sum_launch_records(const std::vector<nlohmann::json>& records, const Trace& trace);

}  // namespace gpulens::kernels

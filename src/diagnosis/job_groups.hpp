// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which GPUs belong to one job, for waiting_on_peer and gpu_imbalance. The
// grouping is an explicit input: `gpulens run` knows its GPU set and passes it;
// otherwise processes are grouped by shared parent, container, pod or command
// line, and when no process says which job it belongs to, every watched GPU is
// taken as one job.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample.hpp"

namespace gpulens::diagnosis {

enum class JobGrouping : std::uint8_t {
  Auto,        // by process keys when any process carries one, else all watched
  AllWatched,  // every watched GPU is one job
  ByProcess,   // by process keys only; GPUs without processes stand alone
};

std::string_view job_grouping_id(JobGrouping mode);
std::optional<JobGrouping> job_grouping_from_id(std::string_view id);

// The job keys of one GPU's processes: "pid:", "ppid:", "container:", "pod:", "slurm:"
// (the Slurm job id), "cmd:".
struct GpuJobKeys {
  int gpu = 0;
  std::vector<std::string> keys;
  bool has_job_info = false;  // a key beyond the pid itself (parent, container, ...)
};

GpuJobKeys job_keys_of(const Sample& sample);

// Groups of GPU indexes (sorted, each GPU in exactly one group). `explicit_groups`,
// when not empty, wins; GPUs it does not name stand alone.
std::vector<std::vector<int>> group_gpus(const std::vector<GpuJobKeys>& gpus, JobGrouping mode,
                                         const std::vector<std::vector<int>>& explicit_groups = {});

}  // namespace gpulens::diagnosis

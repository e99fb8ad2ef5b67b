// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Slurm job and step of a process from its cgroup path, for the layouts that
// Slurm's cgroup plugins create (docs/slurm.md):
//   cgroup/v1: /slurm/uid_<uid>/job_<id>/step_<step>/task_<n>   (one line per controller;
//              "slurm_<node>" in place of "slurm" with several slurmd on one host)
//   cgroup/v2: .../slurmstepd.scope/job_<id>/step_<step>/user/task_<n>
//              ("<node>_slurmstepd.scope" with several slurmd; "slurm" instead of
//              "user" for slurmstepd itself)
// A cgroup is set by slurmstepd as root: a job's processes cannot leave it, so this
// is the attribution the environment cannot forge.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpulens::sources {

struct SlurmCgroup {
  enum class Kind {
    None,           // no sign of Slurm in the path
    Job,            // a job's cgroup: job (and step, uid when the layout has them)
    Daemon,         // Slurm's own cgroup without a job (slurmstepd.scope/system)
    UnknownLayout,  // a Slurm anchor, but what follows fits no known layout
  };
  Kind kind = Kind::None;
  std::string job;                   // decimal job id
  std::string step;                  // "0", "batch", "extern", "interactive"; may be empty
  std::optional<std::uint32_t> uid;  // cgroup/v1's uid_<uid>
  bool operator==(const SlurmCgroup&) const = default;
};

// One cgroup path (without the "hierarchy:controllers:" prefix).
SlurmCgroup parse_slurm_cgroup_path(std::string_view path);

}  // namespace gpulens::sources

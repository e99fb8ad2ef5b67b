// SPDX-License-Identifier: Apache-2.0
#pragma once
// One process's Slurm job from what its cgroup and its environment say, and why it
// could not be told where it could not (counted in the agent's health).
//
// Precedence (docs/slurm.md): the cgroup names the job and step when it has them,
// because slurmstepd (root) puts a job's processes there and they cannot leave, while
// anyone can start a process with SLURM_JOB_ID=... set. The environment adds what the
// cgroup does not hold (account, array ids, user) only when its SLURM_JOB_ID agrees;
// where it disagrees it is ignored and the disagreement counted. Without a Slurm
// cgroup (proctrack/linuxproc, no task/cgroup) the environment is all there is.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/sample.hpp"
#include "sources/host/slurm_cgroup.hpp"
#include "sources/host/slurm_environ.hpp"

namespace gpulens::sources {

enum class SlurmProblem {
  EnvironUnreadable,      // EACCES/EPERM: another user's process, no CAP_SYS_PTRACE
  EnvironGone,            // ENOENT/ESRCH: the process exited before its environment was read
  EnvironTruncated,       // no SLURM_JOB_ID within the read cap
  MalformedJobId,         // SLURM_JOB_ID is not a job id
  MalformedValue,         // another SLURM_ variable too long or not printable: dropped
  UnknownCgroupLayout,    // a Slurm cgroup that fits no known layout
  EnvironCgroupDisagree,  // SLURM_JOB_ID names another job than the cgroup: cgroup wins
};
inline constexpr std::size_t kSlurmProblemCount = 7;
using SlurmProblemCounts = std::array<std::uint64_t, kSlurmProblemCount>;

// "environ_unreadable", "environ_gone", ...: the reason label of the agent's counter.
std::string_view slurm_problem_id(SlurmProblem p);

struct SlurmEvidence {
  SlurmCgroup cgroup;
  std::optional<SlurmEnviron> environ;  // nullopt: could not be read (environ_errno)
  int environ_errno = 0;
  bool environ_truncated = false;  // the read stopped at the cap
};

struct SlurmAttribution {
  std::optional<SlurmJob> job;  // nullopt: no sign of Slurm
  std::array<bool, kSlurmProblemCount> problems{};
  bool has(SlurmProblem p) const { return problems[static_cast<std::size_t>(p)]; }
};

// cgroup_user: the name of the cgroup's uid (v1), empty when it has none;
// process_user: the name of the process's real uid, the last resort.
SlurmAttribution attribute_slurm(const SlurmEvidence& evidence, std::string_view cgroup_user,
                                 std::string_view process_user);

}  // namespace gpulens::sources

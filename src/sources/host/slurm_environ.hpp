// SPDX-License-Identifier: Apache-2.0
#pragma once
// The SLURM_* variables that name a process's job, from /proc/PID/environ (NUL-
// separated NAME=value entries as the process was started). Every other variable is
// skipped unread: an environment holds secrets, and nothing of it is kept but these.
// The environment is the user's to set: docs/slurm.md says what that allows.
#include <string>
#include <string_view>

namespace gpulens::sources {

struct SlurmEnviron {
  std::string job;      // SLURM_JOB_ID (or the older SLURM_JOBID), valid; else empty
  std::string step;     // SLURM_STEP_ID (or SLURM_STEPID)
  std::string user;     // SLURM_JOB_USER
  std::string account;  // SLURM_JOB_ACCOUNT
  std::string array_job;
  std::string array_task;
  bool job_malformed = false;    // SLURM_JOB_ID was there but is not a job id
  bool value_malformed = false;  // another variable was dropped: too long or not printable
  bool operator==(const SlurmEnviron&) const = default;
};

// The first entry of a name wins, as getenv() finds it. A last entry cut off by the
// read cap is ignored (it would be a prefix of the real value).
SlurmEnviron parse_slurm_environ(std::string_view raw, bool truncated = false);

}  // namespace gpulens::sources

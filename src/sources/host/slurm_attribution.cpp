// SPDX-License-Identifier: Apache-2.0
#include "sources/host/slurm_attribution.hpp"

#include <cerrno>

namespace gpulens::sources {
namespace {

// The step and array ids the environment adds. Not the user or the account: the
// process's owner can set those to anyone's, and they decide who pays; they come
// from the cgroup's uid, the owner, or Slurm's records (confirm_slurm_jobs).
void take_environ_extras(SlurmJob& job, const SlurmEnviron& env) {
  if (job.step.empty()) job.step = env.step;
  job.array_job = env.array_job;
  job.array_task = env.array_task;
}

}  // namespace

std::string_view slurm_problem_id(SlurmProblem p) {
  switch (p) {
    case SlurmProblem::EnvironUnreadable:
      return "environ_unreadable";
    case SlurmProblem::EnvironGone:
      return "environ_gone";
    case SlurmProblem::EnvironTruncated:
      return "environ_truncated";
    case SlurmProblem::MalformedJobId:
      return "malformed_job_id";
    case SlurmProblem::MalformedValue:
      return "malformed_value";
    case SlurmProblem::UnknownCgroupLayout:
      return "unknown_cgroup_layout";
    case SlurmProblem::EnvironCgroupDisagree:
      return "environ_cgroup_disagree";
  }
  return "unknown";
}

SlurmAttribution attribute_slurm(const SlurmEvidence& evidence, std::string_view cgroup_user,
                                 std::string_view process_user) {
  SlurmAttribution out;
  const auto flag = [&](SlurmProblem p) { out.problems[static_cast<std::size_t>(p)] = true; };
  const SlurmCgroup& cg = evidence.cgroup;
  const SlurmEnviron* env = evidence.environ ? &*evidence.environ : nullptr;
  if (env == nullptr) {
    const int err = evidence.environ_errno;
    flag(err == ENOENT || err == ESRCH ? SlurmProblem::EnvironGone
                                       : SlurmProblem::EnvironUnreadable);
  } else {
    if (env->job_malformed) flag(SlurmProblem::MalformedJobId);
    if (env->value_malformed) flag(SlurmProblem::MalformedValue);
    if (evidence.environ_truncated && env->job.empty() && !env->job_malformed) {
      flag(SlurmProblem::EnvironTruncated);
    }
  }
  if (cg.kind == SlurmCgroup::Kind::UnknownLayout) flag(SlurmProblem::UnknownCgroupLayout);

  SlurmJob job;
  if (cg.kind == SlurmCgroup::Kind::Job) {
    job.job = cg.job;
    job.step = cg.step;
    job.from = "cgroup";
    const bool env_agrees = env != nullptr && env->job == cg.job;
    if (env_agrees) {
      take_environ_extras(job, *env);
    } else if (env != nullptr && !env->job.empty()) {
      flag(SlurmProblem::EnvironCgroupDisagree);
    }
    job.user = !cgroup_user.empty() ? std::string(cgroup_user) : std::string(process_user);
  } else if (env != nullptr && !env->job.empty()) {
    job.job = env->job;
    job.from = "environ";  // a claim until Slurm's allocation confirms it (confirm_slurm_jobs)
    take_environ_extras(job, *env);
    job.user = std::string(process_user);
  } else if (env != nullptr && env->job_malformed) {
    job.unknown = "malformed SLURM_JOB_ID";
    job.user = std::string(process_user);
  } else if (cg.kind == SlurmCgroup::Kind::UnknownLayout) {
    job.unknown = "Slurm cgroup of an unknown layout";
    job.user = std::string(process_user);
  } else {
    return out;  // no sign of a job (a Slurm daemon's own cgroup names none)
  }
  out.job = std::move(job);
  return out;
}

}  // namespace gpulens::sources

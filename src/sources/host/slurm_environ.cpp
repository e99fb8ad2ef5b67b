// SPDX-License-Identifier: Apache-2.0
#include "sources/host/slurm_environ.hpp"

#include <array>
#include <optional>

#include "sources/host/slurm_ids.hpp"

namespace gpulens::sources {
namespace {

enum class Field { Job, Step, User, Account, ArrayJob, ArrayTask };
constexpr std::size_t kFieldCount = 6;

struct Variable {
  std::string_view name;
  Field field;
};

// The older names (SLURM_JOBID, SLURM_STEPID) come after the current ones: where
// both are set, the current one is read.
constexpr std::array<Variable, 8> kVariables{{
    {"SLURM_JOB_ID", Field::Job},
    {"SLURM_JOBID", Field::Job},
    {"SLURM_STEP_ID", Field::Step},
    {"SLURM_STEPID", Field::Step},
    {"SLURM_JOB_USER", Field::User},
    {"SLURM_JOB_ACCOUNT", Field::Account},
    {"SLURM_ARRAY_JOB_ID", Field::ArrayJob},
    {"SLURM_ARRAY_TASK_ID", Field::ArrayTask},
}};

std::optional<std::string> validate(Field f, std::string_view value) {
  switch (f) {
    case Field::Job:
    case Field::ArrayJob:
      return valid_slurm_job_id(value);
    case Field::Step:
      return valid_slurm_step(value);
    case Field::ArrayTask:
      return valid_slurm_number(value);
    case Field::User:
    case Field::Account:
      return valid_slurm_name(value);
  }
  return std::nullopt;
}

std::string& slot(SlurmEnviron& env, Field f) {
  switch (f) {
    case Field::Job:
      return env.job;
    case Field::Step:
      return env.step;
    case Field::User:
      return env.user;
    case Field::Account:
      return env.account;
    case Field::ArrayJob:
      return env.array_job;
    case Field::ArrayTask:
      break;
  }
  return env.array_task;
}

}  // namespace

SlurmEnviron parse_slurm_environ(std::string_view raw, bool truncated) {
  // The first entry of each name, as getenv() would find it.
  std::array<std::optional<std::string_view>, kVariables.size()> first{};
  while (!raw.empty()) {
    const auto nul = raw.find('\0');
    if (nul == std::string_view::npos && truncated) break;  // cut off by the read cap
    const auto entry = raw.substr(0, nul);
    raw.remove_prefix(nul == std::string_view::npos ? raw.size() : nul + 1);
    if (!entry.starts_with("SLURM_")) continue;
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    for (std::size_t i = 0; i < kVariables.size(); ++i) {
      if (kVariables[i].name == entry.substr(0, eq) && !first[i]) first[i] = entry.substr(eq + 1);
    }
  }
  SlurmEnviron out;
  std::array<bool, kFieldCount> decided{};
  // In table order, so a current name decides before its older spelling.
  for (std::size_t i = 0; i < kVariables.size(); ++i) {
    const auto f = kVariables[i].field;
    if (!first[i] || decided[static_cast<std::size_t>(f)]) continue;
    decided[static_cast<std::size_t>(f)] = true;
    if (auto valid = validate(f, *first[i])) {
      slot(out, f) = std::move(*valid);
    } else if (f == Field::Job) {
      out.job_malformed = true;
    } else {
      out.value_malformed = true;
    }
  }
  return out;
}

}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
#include "sources/host/slurm_cgroup.hpp"

#include <vector>

#include "sources/host/slurm_ids.hpp"

namespace gpulens::sources {
namespace {

// How many segments a path may have for us to look at; deeper ones are not Slurm's.
constexpr std::size_t kMaxSegments = 64;

// The v1 hierarchy root: "slurm", or "slurm_<node>" with several slurmd per host.
bool v1_anchor(std::string_view seg) {
  return seg == "slurm" || (seg.starts_with("slurm_") && seg.size() > 6);
}

// The v2 scope slurmd puts every slurmstepd in: "slurmstepd.scope" or
// "<node>_slurmstepd.scope".
bool v2_anchor(std::string_view seg) {
  constexpr std::string_view kScope = "slurmstepd.scope";
  return seg == kScope || (seg.ends_with(kScope) && seg.size() > kScope.size() + 1 &&
                           seg[seg.size() - kScope.size() - 1] == '_');
}

std::optional<std::string_view> after_prefix(std::string_view seg, std::string_view prefix) {
  if (!seg.starts_with(prefix)) return std::nullopt;
  return seg.substr(prefix.size());
}

// job_<id>[/step_<step>]: the job and step segments that follow an anchor.
SlurmCgroup job_and_step(const std::vector<std::string_view>& segs, std::size_t at) {
  SlurmCgroup out;
  out.kind = SlurmCgroup::Kind::UnknownLayout;
  if (at >= segs.size()) return out;
  const auto id = after_prefix(segs[at], "job_");
  const auto job = id ? valid_slurm_job_id(*id) : std::nullopt;
  if (!job) return out;
  if (at + 1 < segs.size()) {
    const auto step_text = after_prefix(segs[at + 1], "step_");
    const auto step = step_text ? valid_slurm_step(*step_text) : std::nullopt;
    if (!step) return out;  // job_<id>/<something else>: not a layout we know
    out.step = *step;
  }
  out.kind = SlurmCgroup::Kind::Job;
  out.job = *job;
  return out;
}

}  // namespace

SlurmCgroup parse_slurm_cgroup_path(std::string_view path) {
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.ends_with(kDeleted)) path.remove_suffix(kDeleted.size());
  std::vector<std::string_view> segs;
  while (!path.empty() && segs.size() < kMaxSegments) {
    const auto slash = path.find('/');
    const auto seg = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    if (!seg.empty()) segs.push_back(seg);
  }
  // Slurm's own root only: slurmd puts its scope at the top of the hierarchy or
  // in system.slice (v2), and its v1 root at the top of each controller. Under
  // systemd's user delegation anyone can make a cgroup of any name further down
  // (user.slice/.../slurmstepd.scope/job_1): a look-alike there is a forged
  // layout, counted as unknown and naming no job. v2 first: below a step,
  // "slurm" holds that step's slurmstepd and is no v1 root.
  const auto at_root = [&](std::size_t i) {
    return i == 0 || (i == 1 && segs[0] == "system.slice");
  };
  for (std::size_t i = segs.size(); i-- > 0;) {
    if (!v2_anchor(segs[i])) continue;
    if (!at_root(i)) return {SlurmCgroup::Kind::UnknownLayout, {}, {}, {}};
    if (i + 1 == segs.size() || segs[i + 1] == "system") {
      return {SlurmCgroup::Kind::Daemon, {}, {}, {}};  // slurmstepd itself, no job
    }
    return job_and_step(segs, i + 1);
  }
  for (std::size_t i = segs.size(); i-- > 0;) {
    if (v1_anchor(segs[i])) {
      if (i != 0) return {SlurmCgroup::Kind::UnknownLayout, {}, {}, {}};
      if (i + 1 == segs.size()) return {SlurmCgroup::Kind::Daemon, {}, {}, {}};
      const auto uid_text = after_prefix(segs[i + 1], "uid_");
      const auto uid = uid_text ? valid_slurm_number(*uid_text) : std::nullopt;
      if (!uid) return {SlurmCgroup::Kind::UnknownLayout, {}, {}, {}};
      auto out = job_and_step(segs, i + 2);
      if (out.kind == SlurmCgroup::Kind::Job)
        out.uid = static_cast<std::uint32_t>(std::stoul(*uid));
      return out;
    }
  }
  return {};
}

}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Container and Kubernetes pod identity from /proc/PID/cgroup, for the layouts that
// Docker, containerd/CRI, CRI-O, podman and the kubelet create under cgroup v1 and v2,
// and the Slurm job of Slurm's cgroup plugins (slurm_cgroup.hpp).
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "sources/host/slurm_cgroup.hpp"

namespace gpulens::sources {

struct CgroupInfo {
  std::string container;  // full 64-hex container ID; empty when not in a container
  std::string pod;        // Kubernetes pod UID with dashes; empty when not in a pod
  SlurmCgroup slurm;      // set by parse_pid_cgroup only
  bool operator==(const CgroupInfo&) const = default;
};

// One cgroup path, e.g. "/kubepods/burstable/pod<uid>/<id>" or
// "/system.slice/docker-<id>.scope". Unknown layouts give empty strings.
CgroupInfo parse_cgroup_path(std::string_view path);

// A whole /proc/PID/cgroup file ("hierarchy:controllers:path" per line). The first line
// naming a container wins, so v1 files whose controllers disagree still resolve; so
// does the first line naming a Slurm job (under v1 only some controllers have one).
Result<CgroupInfo> parse_pid_cgroup(std::string_view text);

}  // namespace gpulens::sources

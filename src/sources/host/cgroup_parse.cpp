// SPDX-License-Identifier: Apache-2.0
#include "sources/host/cgroup_parse.hpp"

#include <algorithm>
#include <optional>

#include "sources/host/text_scan.hpp"

namespace gpulens::sources {
namespace {

using text_scan::is_hex;

bool is_container_id(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), is_hex);
}

// A pod UID as the kubelet writes it into cgroup names: a UUID, or 32 hex digits for
// static pods (a hash of the manifest). The systemd driver escapes '-' as '_'.
std::optional<std::string> pod_uid(std::string_view raw) {
  std::string uid(raw);
  std::replace(uid.begin(), uid.end(), '_', '-');
  if (uid.size() == 32) {
    if (!std::all_of(uid.begin(), uid.end(), is_hex)) return std::nullopt;
    return uid;
  }
  if (uid.size() != 36) return std::nullopt;
  for (std::size_t i = 0; i < uid.size(); ++i) {
    const bool dash_here = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_here ? uid[i] != '-' : !is_hex(uid[i])) return std::nullopt;
  }
  return uid;
}

// "<runtime>-<id>.scope" (systemd cgroup driver): docker-, cri-containerd-, crio-, libpod-.
std::optional<std::string_view> scope_container_id(std::string_view seg) {
  constexpr std::string_view kScope = ".scope";
  if (!seg.ends_with(kScope)) return std::nullopt;
  const auto stem = seg.substr(0, seg.size() - kScope.size());
  const auto dash = stem.rfind('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const auto id = stem.substr(dash + 1);
  // crio-conmon-<id> and libpod-conmon-<id> hold the runtime's monitor, which lives
  // outside the container it watches.
  if (!is_container_id(id) || stem.substr(0, dash).ends_with("conmon")) return std::nullopt;
  return id;
}

// "kubepods-<qos>-pod<uid>.slice" (systemd driver) or "pod<uid>" (cgroupfs driver).
std::optional<std::string> segment_pod_uid(std::string_view seg) {
  constexpr std::string_view kSlice = ".slice";
  if (seg.starts_with("kubepods") && seg.ends_with(kSlice)) {
    const auto stem = seg.substr(0, seg.size() - kSlice.size());
    const auto at = stem.rfind("-pod");
    if (at == std::string_view::npos) return std::nullopt;
    return pod_uid(stem.substr(at + 4));
  }
  if (seg.starts_with("pod")) return pod_uid(seg.substr(3));
  return std::nullopt;
}

}  // namespace

CgroupInfo parse_cgroup_path(std::string_view path) {
  // A removed cgroup keeps its path with this suffix until the last process leaves.
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.ends_with(kDeleted)) path.remove_suffix(kDeleted.size());

  // Later (deeper) segments win: with Kubernetes nested in a container (kind), the
  // innermost container is the one running the process.
  CgroupInfo out;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const auto seg = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    if (seg.empty()) continue;
    if (is_container_id(seg)) {
      out.container.assign(seg);  // cgroupfs driver: /docker/<id>, /kubepods/.../<id>
    } else if (const auto id = scope_container_id(seg)) {
      out.container.assign(*id);
    } else if (auto uid = segment_pod_uid(seg)) {
      out.pod = std::move(*uid);
      out.container.clear();  // a pod's containers sit below it, never above
    }
  }
  return out;
}

Result<CgroupInfo> parse_pid_cgroup(std::string_view text) {
  std::optional<CgroupInfo> container, first_pod;
  SlurmCgroup slurm;
  for (std::string_view rest = text; !rest.empty();) {
    const auto line = text_scan::next_line(rest);
    if (line.empty()) continue;
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos || !text_scan::to_unsigned(line.substr(0, c1))) {
      return Error{"cgroup: expected hierarchy:controllers:path"};
    }
    const auto path = line.substr(c2 + 1);
    if (!path.starts_with('/')) return Error{"cgroup: path does not start with '/'"};
    if (slurm.kind != SlurmCgroup::Kind::Job) {
      // A job on any line beats a daemon or an odd path on another; an odd path
      // beats none, so that it is counted.
      auto s = parse_slurm_cgroup_path(path);
      if (s.kind == SlurmCgroup::Kind::Job ||
          static_cast<int>(s.kind) > static_cast<int>(slurm.kind)) {
        slurm = std::move(s);
      }
    }
    if (container) continue;
    auto info = parse_cgroup_path(path);
    if (!info.container.empty()) {
      container = std::move(info);
    } else if (!info.pod.empty() && !first_pod) {
      first_pod = std::move(info);
    }
  }
  CgroupInfo out = container   ? std::move(*container)
                   : first_pod ? std::move(*first_pod)
                               : CgroupInfo{};
  out.slurm = std::move(slurm);
  return out;
}

}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kubernetes names (namespace, pod, container) for the container IDs and pod UIDs
// that /proc/PID/cgroup gives, read from the kubelet's log layout so that the agent
// needs neither the API server nor the kubelet's gRPC socket:
//   <root>/containers/<pod>_<namespace>_<container>-<64-hex container ID>.log
//   <root>/pods/<namespace>_<pod>_<pod UID>/
// Names cannot contain '_' (they are DNS labels and subdomains), so the split is exact.
#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpulens::sources {

struct KubeRef {
  std::string namespace_name;
  std::string pod;
  std::string container;  // empty when only the pod is known
  bool operator==(const KubeRef&) const = default;
};

// One /var/log/containers entry: the container ID and its names; nullopt for
// anything else (rotated copies, editor leftovers, names with bad characters).
std::optional<std::pair<std::string, KubeRef>> parse_container_log_name(std::string_view name);

// One /var/log/pods entry: the pod UID and the pod's names (no container).
std::optional<std::pair<std::string, KubeRef>> parse_pod_log_dir_name(std::string_view name);

// The two directories under one root, listed again only when one of them changed
// (its mtime, inode or existence) and at most once per `recheck`. Owned by one
// thread: the agent's sampling loop refreshes it once per tick.
class KubePodResolver {
 public:
  using Clock = std::chrono::steady_clock;

  explicit KubePodResolver(std::string root,
                           std::chrono::milliseconds recheck = std::chrono::seconds(5));

  // Looks at the directories when `recheck` has passed since the last look.
  void refresh() { refresh(Clock::now()); }
  void refresh(Clock::time_point now);

  std::optional<KubeRef> by_container(std::string_view container_id) const;
  std::optional<KubeRef> by_pod(std::string_view pod_uid) const;

  // Either directory exists: this is a Kubernetes node (or a copy of one's logs).
  bool kubernetes() const { return containers_.exists || pods_.exists; }
  // How often a directory was listed (tests: nothing changed, nothing listed).
  std::uint64_t listings() const { return listings_; }
  const std::string& root() const { return root_; }

 private:
  struct Dir {
    std::string path;
    bool exists = false;
    bool racy = false;  // changed within the file system's timestamp granularity
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    timespec mtime{};
    std::map<std::string, KubeRef, std::less<>> entries;
  };
  using Parser = std::optional<std::pair<std::string, KubeRef>> (*)(std::string_view);

  void update(Dir& dir, Parser parse);

  std::string root_;
  std::chrono::milliseconds recheck_;
  std::optional<Clock::time_point> last_look_;
  Dir containers_;
  Dir pods_;
  std::uint64_t listings_ = 0;
};

}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
#include "sources/host/kube_pods.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

namespace gpulens::sources {
namespace {

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool lower_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// RFC 1123 names as Kubernetes checks them: a label (namespaces, containers) has
// at most 63 characters and no dots; a subdomain (pods) up to 253 with dots.
bool dns_name(std::string_view s, bool dots, std::size_t max) {
  if (s.empty() || s.size() > max || !lower_alnum(s.front()) || !lower_alnum(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(),
                     [dots](char c) { return lower_alnum(c) || c == '-' || (dots && c == '.'); });
}

bool dns_label(std::string_view s) {
  return dns_name(s, false, 63);
}

bool dns_subdomain(std::string_view s) {
  return dns_name(s, true, 253);
}

// A UUID (the API server's pod UIDs) or 32 hex digits (a static pod's manifest hash).
bool is_pod_uid(std::string_view s) {
  if (s.size() == 32) return std::all_of(s.begin(), s.end(), lower_hex);
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !lower_hex(s[i])) return false;
  }
  return true;
}

// Splits "a_b_c" into exactly three parts; false for any other count.
bool split3(std::string_view s, std::string_view (&parts)[3]) {
  for (int i = 0; i < 2; ++i) {
    const auto at = s.find('_');
    if (at == std::string_view::npos) return false;
    parts[i] = s.substr(0, at);
    s.remove_prefix(at + 1);
  }
  if (s.find('_') != std::string_view::npos) return false;
  parts[2] = s;
  return true;
}

double seconds_of(const timespec& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

std::optional<std::pair<std::string, KubeRef>> parse_container_log_name(std::string_view name) {
  constexpr std::string_view kLog = ".log";
  constexpr std::size_t kIdLength = 64;
  if (!name.ends_with(kLog)) return std::nullopt;
  name.remove_suffix(kLog.size());
  if (name.size() < kIdLength + 1) return std::nullopt;
  const auto id = name.substr(name.size() - kIdLength);
  name.remove_suffix(kIdLength);
  if (!name.ends_with('-') || !std::all_of(id.begin(), id.end(), lower_hex)) return std::nullopt;
  name.remove_suffix(1);
  std::string_view parts[3];  // pod, namespace, container
  if (!split3(name, parts) || !dns_subdomain(parts[0]) || !dns_label(parts[1]) ||
      !dns_label(parts[2]))
    return std::nullopt;
  return std::make_pair(std::string(id), KubeRef{std::string(parts[1]), std::string(parts[0]),
                                                 std::string(parts[2])});
}

std::optional<std::pair<std::string, KubeRef>> parse_pod_log_dir_name(std::string_view name) {
  std::string_view parts[3];  // namespace, pod, UID
  if (!split3(name, parts) || !dns_label(parts[0]) || !dns_subdomain(parts[1]) ||
      !is_pod_uid(parts[2]))
    return std::nullopt;
  return std::make_pair(std::string(parts[2]),
                        KubeRef{std::string(parts[0]), std::string(parts[1]), std::string()});
}

KubePodResolver::KubePodResolver(std::string root, std::chrono::milliseconds recheck)
    : root_(std::move(root)), recheck_(recheck) {
  containers_.path = root_ + "/containers";
  pods_.path = root_ + "/pods";
}

void KubePodResolver::refresh(Clock::time_point now) {
  if (root_.empty()) return;  // no root: nothing to name ("/containers" is not one)
  if (last_look_ && now - *last_look_ < recheck_) return;
  last_look_ = now;
  update(containers_, &parse_container_log_name);
  update(pods_, &parse_pod_log_dir_name);
}

void KubePodResolver::update(Dir& dir, Parser parse) {
  struct stat st {};
  if (::stat(dir.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    dir.exists = false;
    dir.racy = false;
    dir.entries.clear();
    return;
  }
  const bool same = dir.exists && !dir.racy && dir.dev == st.st_dev && dir.ino == st.st_ino &&
                    dir.mtime.tv_sec == st.st_mtim.tv_sec &&
                    dir.mtime.tv_nsec == st.st_mtim.tv_nsec;
  if (same) return;
  std::map<std::string, KubeRef, std::less<>> entries;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir.path, ec);
  // Entries are parsed by name only: no stat per entry, no symlink followed.
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (auto parsed = parse(it->path().filename().native())) entries.insert(std::move(*parsed));
  }
  ++listings_;
  if (ec) return;  // keep what was known; the next look tries again
  dir.entries = std::move(entries);
  dir.exists = true;
  dir.dev = st.st_dev;
  dir.ino = st.st_ino;
  dir.mtime = st.st_mtim;
  // A change in the same timestamp tick as this listing would leave the mtime as it
  // is now: while the mtime is that fresh, list again at the next look.
  timespec wall{};
  clock_gettime(CLOCK_REALTIME, &wall);
  dir.racy = seconds_of(wall) - seconds_of(st.st_mtim) < 2.0;
}

std::optional<KubeRef> KubePodResolver::by_container(std::string_view container_id) const {
  if (const auto it = containers_.entries.find(container_id); it != containers_.entries.end())
    return it->second;
  return std::nullopt;
}

std::optional<KubeRef> KubePodResolver::by_pod(std::string_view pod_uid) const {
  if (const auto it = pods_.entries.find(pod_uid); it != pods_.entries.end()) return it->second;
  return std::nullopt;
}

}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
#include "jobs/process_tree.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sources/host/procfs_parse.hpp"

namespace gpulens::jobs {

std::set<std::uint32_t> descendants(
    const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pid_ppid, std::uint32_t root) {
  std::multimap<std::uint32_t, std::uint32_t> children;
  for (const auto& [pid, ppid] : pid_ppid) children.emplace(ppid, pid);
  std::set<std::uint32_t> out{root};
  std::vector<std::uint32_t> pending{root};
  while (!pending.empty()) {
    const auto p = pending.back();
    pending.pop_back();
    const auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) {
      if (out.insert(it->second).second) pending.push_back(it->second);
    }
  }
  return out;
}

std::set<std::uint32_t> process_tree(const std::string& procfs, std::uint32_t root) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> links;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(procfs, ec)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    if (!in) continue;  // the process ended while we looked
    std::stringstream ss;
    ss << in.rdbuf();
    const auto stat = sources::parse_pid_stat(ss.str());
    if (stat) links.emplace_back(stat->pid, stat->ppid);
  }
  return descendants(links, root);
}

std::set<int> gpus_used_by(const std::vector<Sample>& samples,
                           const std::set<std::uint32_t>& pids) {
  std::set<int> out;
  for (const auto& s : samples) {
    if (!s.procs) continue;
    for (const auto& p : *s.procs) {
      if (pids.count(p.pid) != 0) out.insert(s.gpu);
    }
  }
  return out;
}

}  // namespace gpulens::jobs

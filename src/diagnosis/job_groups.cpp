// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/job_groups.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace gpulens::diagnosis {
namespace {

struct UnionFind {
  std::vector<std::size_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  std::size_t find(std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void join(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

}  // namespace

std::string_view job_grouping_id(JobGrouping mode) {
  switch (mode) {
    case JobGrouping::AllWatched:
      return "all";
    case JobGrouping::ByProcess:
      return "process";
    case JobGrouping::Auto:
      break;
  }
  return "auto";
}

std::optional<JobGrouping> job_grouping_from_id(std::string_view id) {
  if (id == "auto") return JobGrouping::Auto;
  if (id == "all") return JobGrouping::AllWatched;
  if (id == "process") return JobGrouping::ByProcess;
  return std::nullopt;
}

GpuJobKeys job_keys_of(const Sample& sample) {
  GpuJobKeys k;
  k.gpu = sample.gpu;
  if (!sample.procs) return k;
  for (const auto& p : sample.procs.value()) {
    k.keys.push_back("pid:" + std::to_string(p.pid));
    // Parent 1 is init: every daemon shares it, so it says nothing about a job.
    if (p.ppid && *p.ppid > 1) k.keys.push_back("ppid:" + std::to_string(*p.ppid));
    if (!p.container.empty()) k.keys.push_back("container:" + p.container);
    if (!p.pod.empty()) k.keys.push_back("pod:" + p.pod);
    // Every step of a Slurm job is the same job: its GPUs are judged together.
    if (p.slurm && !p.slurm->job.empty()) k.keys.push_back("slurm:" + p.slurm->job);
    if (!p.cmdline.empty()) k.keys.push_back("cmd:" + p.cmdline);
  }
  k.has_job_info = std::any_of(k.keys.begin(), k.keys.end(),
                               [](const std::string& key) { return key.rfind("pid:", 0) != 0; });
  return k;
}

std::vector<std::vector<int>> group_gpus(const std::vector<GpuJobKeys>& gpus, JobGrouping mode,
                                         const std::vector<std::vector<int>>& explicit_groups) {
  std::vector<std::vector<int>> out;
  if (!explicit_groups.empty()) {
    std::vector<int> named;
    for (const auto& g : explicit_groups) {
      std::vector<int> group;
      for (int gpu : g) {
        const bool watched = std::any_of(gpus.begin(), gpus.end(),
                                         [gpu](const GpuJobKeys& k) { return k.gpu == gpu; });
        if (watched && std::find(named.begin(), named.end(), gpu) == named.end()) {
          group.push_back(gpu);
          named.push_back(gpu);
        }
      }
      if (!group.empty()) out.push_back(std::move(group));
    }
    for (const auto& g : gpus) {
      if (std::find(named.begin(), named.end(), g.gpu) == named.end()) out.push_back({g.gpu});
    }
  } else {
    const bool any_info =
        std::any_of(gpus.begin(), gpus.end(), [](const GpuJobKeys& k) { return k.has_job_info; });
    if (mode == JobGrouping::AllWatched || (mode == JobGrouping::Auto && !any_info)) {
      std::vector<int> all;
      for (const auto& g : gpus) all.push_back(g.gpu);
      if (!all.empty()) out.push_back(std::move(all));
    }
    if (out.empty()) {
      UnionFind uf(gpus.size());
      std::map<std::string_view, std::size_t> first_owner;
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        for (const auto& key : gpus[i].keys) {
          auto [it, inserted] = first_owner.emplace(key, i);
          if (!inserted) uf.join(i, it->second);
        }
      }
      std::map<std::size_t, std::vector<int>> by_root;
      for (std::size_t i = 0; i < gpus.size(); ++i) by_root[uf.find(i)].push_back(gpus[i].gpu);
      for (auto& [root, group] : by_root) out.push_back(std::move(group));
    }
  }
  for (auto& g : out) std::sort(g.begin(), g.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpulens::diagnosis

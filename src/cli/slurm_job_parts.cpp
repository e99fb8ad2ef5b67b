// SPDX-License-Identifier: Apache-2.0
#include "cli/slurm_job_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/input_limits.hpp"
#include "core/trace_reader.hpp"

namespace gpulens::cli {
namespace {

std::string part_string(const nlohmann::json& part, const char* key) {
  const auto it = part.find(key);
  return it != part.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double part_number(const nlohmann::json& part, const char* key) {
  const auto it = part.find(key);
  return it != part.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string gpu_list(const std::vector<int>& gpus) {
  std::string out;
  for (int g : gpus) out += fmt::format("{}{}", out.empty() ? "" : ", ", g);
  return out;
}

}  // namespace

Result<store::SlurmJobTrace> load_slurm_job_parts(const std::vector<std::string>& files,
                                                  std::string_view job) {
  if (files.size() > kMaxJobParts) {
    return Error{fmt::format("{} parts given (at most {})", files.size(), kMaxJobParts)};
  }
  store::SlurmJobTrace out;
  out.job = std::string(job);
  Trace& merged = out.history.trace;
  std::set<std::string> nodes, steps, sources;
  bool first = true;
  for (const auto& file : files) {
    auto read = read_trace(file);
    if (!read) return Error{fmt::format("part {}: {}", file, read.error().message)};
    Trace& t = *read;
    const auto it = t.header.extra.find("x_slurm_job");
    if (it == t.header.extra.end() || !it->is_object()) {
      return Error{fmt::format(
          "part {} is not a node's part of a Slurm job (no x_slurm_job in its header: the agents "
          "serve parts at /api/v1/slurm/job?id=ID)",
          file)};
    }
    const nlohmann::json& part = *it;
    const std::string part_job = part_string(part, "job");
    const std::string node =
        part_string(part, "node").empty() ? t.header.host : part_string(part, "node");
    if (part_job != job) {
      return Error{fmt::format("part {} is node {}'s part of Slurm job {}, not of {}", file, node,
                               part_job, job)};
    }
    if (!nodes.insert(node).second) {
      return Error{fmt::format("part {}: node {} is given twice", file, node)};
    }
    const int offset = static_cast<int>(merged.header.devices.size());
    if (merged.header.devices.size() + t.header.devices.size() > kMaxDevices) {
      return Error{fmt::format("the parts hold more than {} GPUs", kMaxDevices)};
    }
    std::vector<int> local, global;
    for (auto d : t.header.devices) {
      local.push_back(d.index);
      d.extra["x_node"] = node;
      d.extra["x_node_gpu"] = d.index;
      d.index += offset;
      global.push_back(d.index);
      merged.header.devices.push_back(std::move(d));
    }
    for (auto& s : t.samples) {
      s.gpu += offset;
      merged.samples.push_back(std::move(s));
    }
    if (first) {
      merged.header.interval_s = t.header.interval_s;
      merged.header.driver = t.header.driver;
    }
    merged.header.host += (first ? "" : ", ") + node;
    const double from = part_number(part, "from"), to = part_number(part, "to");
    out.first_t = first ? from : std::min(out.first_t, from);
    out.last_t = first ? to : std::max(out.last_t, to);
    if (out.user.empty()) out.user = part_string(part, "user");
    if (out.account.empty()) out.account = part_string(part, "account");
    if (const auto st = part.find("steps"); st != part.end() && st->is_array()) {
      for (const auto& s : *st) {
        if (s.is_string()) steps.insert(s.get<std::string>());
      }
    }
    if (const auto a = part.find("allocated"); a != part.end() && a->is_boolean()) {
      out.allocated = out.allocated || a->get<bool>();
    }
    sources.insert(part_string(part, "samples"));
    for (auto& w : t.warnings) merged.warnings.push_back(node + ": " + w);
    if (const auto notes = part.find("notes"); notes != part.end() && notes->is_array()) {
      for (const auto& n : *notes) {
        if (n.is_string()) merged.warnings.push_back(node + ": " + n.get<std::string>());
      }
    }
    out.gpus.insert(out.gpus.end(), global.begin(), global.end());
    out.node_parts.push_back(fmt::format("{} GPU{} {}{}", node, global.size() == 1 ? "" : "s",
                                         gpu_list(global),
                                         local == global ? "" : " (its " + gpu_list(local) + ")"));
    first = false;
  }
  if (merged.samples.empty()) {
    return Error{fmt::format("the parts hold no sample of Slurm job {}", job)};
  }
  // One timeline: the verdict reads samples in time order.
  std::stable_sort(merged.samples.begin(), merged.samples.end(),
                   [](const Sample& a, const Sample& b) { return a.t < b.t; });
  out.steps.assign(steps.begin(), steps.end());
  out.history.source = sources.size() == 1 ? *sources.begin() : "rollup_1m+raw";
  return out;
}

}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/launch_counts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <variant>

#include "kernels/record/launch_record_read.hpp"

namespace gpulens::kernels {
namespace {

// pid -> the GPUs the recording's process lists had it on.
std::unordered_map<std::uint32_t, std::set<int>> gpus_by_pid(const Trace& trace) {
  std::unordered_map<std::uint32_t, std::set<int>> out;
  for (const auto& s : trace.samples) {
    if (!s.procs) continue;
    for (const auto& p : *s.procs) out[p.pid].insert(s.gpu);
  }
  return out;
}

double span_of(const Trace& trace) {
  if (trace.samples.empty()) return 0;
  const auto [lo, hi] =
      std::minmax_element(trace.samples.begin(), trace.samples.end(),
                          [](const Sample& a, const Sample& b) { return a.t < b.t; });
  return hi->t - lo->t;
}

}  // namespace

LaunchCounts sum_launch_records(const std::vector<nlohmann::json>& records, const Trace& trace) {
  LaunchCounts out;
  if (records.empty()) return out;
  const auto on_gpus = gpus_by_pid(trace);
  out.span_s = span_of(trace);
  std::unordered_map<std::string, std::uint64_t> by_name;
  std::map<int, std::uint64_t> by_gpu;
  std::size_t not_final = 0;
  std::size_t on_no_gpu = 0;
  for (const auto& line : records) {
    auto read = read_launch_record(line);
    if (const auto* why = std::get_if<std::string>(&read)) {
      out.notes.push_back("a launch record was refused: " + *why);
      continue;
    }
    const auto& r = std::get<LaunchRecord>(read);
    ProcessLaunchCounts p;
    p.pid = r.pid;
    p.comm = r.comm;
    p.kernel_launches = r.kernel_launches;
    p.graph_launches = r.graph_launches;
    p.seconds = static_cast<double>(r.written_ns - r.first_ns) / 1e9;
    p.final = r.final;
    if (const auto it = on_gpus.find(r.pid); it != on_gpus.end()) {
      p.gpus.assign(it->second.begin(), it->second.end());
    }
    // A process on several GPUs feeds all of them; its launches are not split (the
    // counts do not say which device each went to), so each of its GPUs gets them.
    for (int g : p.gpus) by_gpu[g] += r.kernel_launches + r.graph_launches;
    if (p.gpus.empty()) ++on_no_gpu;
    if (!r.final) ++not_final;
    out.kernel_launches += r.kernel_launches;
    out.graph_launches += r.graph_launches;
    out.graphs += r.graphs;
    out.unlisted_launches += r.unlisted_launches;
    for (const auto& k : r.kernels) by_name[k.name] += k.launches;
    out.processes.push_back(std::move(p));
  }
  for (auto& [name, n] : by_name) out.top.push_back({name, n});
  std::sort(out.top.begin(), out.top.end(), [](const auto& a, const auto& b) {
    return a.launches != b.launches ? a.launches > b.launches : a.name < b.name;
  });
  if (out.top.size() > kTopLaunchedKernels) out.top.resize(kTopLaunchedKernels);
  std::sort(out.processes.begin(), out.processes.end(), [](const auto& a, const auto& b) {
    const auto na = a.kernel_launches + a.graph_launches;
    const auto nb = b.kernel_launches + b.graph_launches;
    return na != nb ? na > nb : a.pid < b.pid;
  });
  for (const auto& [gpu, n] : by_gpu) {
    out.gpus.push_back({gpu, n, out.span_s > 0 ? static_cast<double>(n) / out.span_s : 0});
  }
  if (on_no_gpu > 0) {
    out.notes.push_back(fmt::format(
        "{} in no sample's process list (it ran between two samples, or in another PID "
        "namespace than gpulens): {} launches feed no GPU's rate",
        on_no_gpu == 1 ? std::string("1 process was") : fmt::format("{} processes were", on_no_gpu),
        on_no_gpu == 1 ? "its" : "their"));
  }
  if (not_final > 0) {
    out.notes.push_back(fmt::format(
        "{} ended without running exit handlers (os._exit, exec, a signal): {} launches are "
        "counted to the last periodic write (1, 2, 4 and 8 s after the first launch, then "
        "every 10 s by default)",
        not_final == 1 ? std::string("1 process") : fmt::format("{} processes", not_final),
        not_final == 1 ? "its" : "their"));
  }
  return out;
}

}  // namespace gpulens::kernels

// SPDX-License-Identifier: Apache-2.0
// The JSON of /api/v1/kernels, /api/v1/kernels/summary and of /api/v1/health's `kernels`
// (docs/serve.md, docs/kernels-agent.md). Kernel names were made terminal-safe and length-capped
// when they came in (agent/kernel_receiver.cpp); nlohmann escapes them for JSON.
#include <string>

#include "core/json_number.hpp"
#include "exposition/api_json.hpp"

namespace gpulens::exposition {
namespace {

double seconds(std::uint64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

Json time_json(std::uint64_t ns) {
  return json_number(seconds(ns), decimals::kFine);  // kernels run for microseconds
}

Json share_json(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return nullptr;
  return json_number(static_cast<double>(part) / static_cast<double>(whole), decimals::kRatio);
}

Json work_json(const kernels::WorkTotal& w, bool with_bytes) {
  Json j;
  j["count"] = w.count;
  if (with_bytes) j["bytes"] = w.bytes;
  j["time_s"] = time_json(w.ns);
  return j;
}

// Who ran it: one window's, and that of a process's windows totalled over a range
// (a KernelProcessTotal is a KernelWindow: the newest window's).
void put_process(Json& j, const kernels::KernelWindow& p) {
  j["gpu"] = p.gpu;
  j["pid"] = p.pid;
  j["uid"] = p.uid;
  j["process"] = p.process;
  j["device"] = p.device;
  if (!p.kube.pod.empty()) {  // the process's pod, where the kubelet's logs name it
    j["namespace"] = p.kube.namespace_name;
    j["pod"] = p.kube.pod;
    j["container"] = p.kube.container;
  }
}

Json kernel_json(const std::string& name, std::uint64_t launches, std::uint64_t ns,
                 std::uint64_t kernel_ns) {
  return {{"name", name},
          {"launches", launches},
          {"time_s", time_json(ns)},
          {"share", share_json(ns, kernel_ns)}};
}

// What follows the kernels in both: their total, collectives, copies, memsets, drops.
void put_totals(Json& j, const kernels::KernelWindow& t, std::uint64_t kernel_ns) {
  j["kernel_time_s"] = time_json(kernel_ns);
  Json collectives = work_json(t.collectives, false);
  collectives["share"] = share_json(t.collectives.ns, kernel_ns);
  j["collectives"] = std::move(collectives);
  j["copies"] = work_json(t.copies, true);
  j["memsets"] = work_json(t.memsets, true);
  j["cupti_dropped"] = t.cupti_dropped;
  j["summaries_dropped"] = t.summaries_dropped;
}

}  // namespace

Json kernel_window_json(const agent::KernelWindow& w) {
  Json j;
  put_process(j, w);
  j["start"] = json_number(static_cast<double>(w.start_unix_ns) / 1e9, decimals::kTime);
  j["end"] = json_number(static_cast<double>(w.end_unix_ns) / 1e9, decimals::kTime);
  j["window"] = w.window;
  j["busy_s"] = time_json(w.busy_ns);
  j["idle_s"] = time_json(w.idle_ns);
  j["idle_share"] = share_json(w.idle_ns, w.busy_ns + w.idle_ns);
  std::uint64_t kernel_ns = w.other_ns;
  for (const auto& k : w.top) kernel_ns += k.ns;
  Json top = Json::array();
  for (const auto& k : w.top) top.push_back(kernel_json(k.name, k.launches, k.ns, kernel_ns));
  j["kernels"] = std::move(top);
  j["other"] = {{"kernels", w.other_kernels},
                {"launches", w.other_launches},
                {"time_s", time_json(w.other_ns)},
                {"share", share_json(w.other_ns, kernel_ns)}};
  put_totals(j, w, kernel_ns);
  return j;
}

Json kernels_json(const agent::KernelQueryResult& r, double from, double to) {
  Json j;
  j["from"] = json_number(from, decimals::kTime);
  j["to"] = json_number(to, decimals::kTime);
  j["source"] = "memory";
  j["truncated"] = r.truncated;
  Json windows = Json::array();
  for (const auto& w : r.windows) windows.push_back(kernel_window_json(w));
  j["windows"] = std::move(windows);
  return j;
}

Json kernel_totals_json(const std::vector<agent::KernelProcessTotal>& processes, double from,
                        double to, std::size_t top) {
  Json j;
  j["from"] = json_number(from, decimals::kTime);
  j["to"] = json_number(to, decimals::kTime);
  j["source"] = "memory";
  j["top"] = top;
  Json out = Json::array();
  for (const auto& p : processes) {
    Json e;
    put_process(e, p);  // the newest window's
    e["windows"] = p.windows;
    e["oldest_start"] = json_number(static_cast<double>(p.start_unix_ns) / 1e9, decimals::kTime);
    e["newest_end"] = json_number(static_cast<double>(p.end_unix_ns) / 1e9, decimals::kTime);
    e["busy_s"] = time_json(p.busy_ns);
    e["idle_s"] = time_json(p.idle_ns);
    e["idle_share"] = share_json(p.idle_ns, p.busy_ns + p.idle_ns);
    Json top_kernels = Json::array();
    for (const auto& k : p.top) {
      top_kernels.push_back(kernel_json(k.name, k.launches, k.ns, p.kernel_ns));
    }
    e["kernels"] = std::move(top_kernels);
    e["other"] = {{"named_kernels", p.other_named},
                  {"launches", p.other_launches},
                  {"time_s", time_json(p.other_ns)},
                  {"share", share_json(p.other_ns, p.kernel_ns)}};
    put_totals(e, p, p.kernel_ns);
    out.push_back(std::move(e));
  }
  j["processes"] = std::move(out);
  return j;
}

Json kernel_intake_json(const std::optional<agent::KernelIntakeStatus>& status) {
  Json j;
  j["enabled"] = status.has_value();
  if (!status) return j;
  const agent::IntakeCounters& c = status->counters;
  j["socket"] = status->socket;
  j["received"] = c.received;
  j["accepted"] = c.accepted;
  j["refused"] = {{"oversized", c.oversized},
                  {"no_credentials", c.no_credentials},
                  {"rate_limited", c.rate_limited},
                  {"malformed", c.malformed},
                  {"not_on_gpu", c.not_on_gpu}};
  j["unmapped_devices"] = c.unmapped_devices;
  j["sender_dropped"] = c.sender_dropped;
  j["launch_records"] = c.launch_records;
  j["windows_stored"] = status->stored;
  j["windows_per_gpu"] = status->windows_per_gpu;
  j["memory_bytes"] = status->bytes;
  const agent::KernelHistoryCounts& h = status->history;
  j["history"] = {{"enabled", h.enabled},
                  {"loaded", h.loaded},
                  {"skipped", h.skipped},
                  {"written", h.written},
                  {"dropped", h.dropped}};
  return j;
}

}  // namespace gpulens::exposition

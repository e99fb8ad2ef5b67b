// SPDX-License-Identifier: Apache-2.0
// JSON <-> model conversions for gpu-trace v1.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "core/input_limits.hpp"
#include "core/json_format.hpp"
#include "core/trace_reader.hpp"

namespace gpulens {
namespace {

using nlohmann::json;

template <typename T>
std::optional<T> opt_number(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  if constexpr (std::is_integral_v<T>) {
    // Converting a number outside T's range is undefined behaviour (found by
    // fuzz_trace: 7.8e94 as an int in a header): such a value reads as absent.
    const double v = it->get<double>();
    const double top = std::ldexp(1.0, std::numeric_limits<T>::digits);  // first past T
    const double bottom = std::is_signed_v<T> ? -top : 0.0;
    if (!(v >= bottom && v < top)) return std::nullopt;
    if (it->is_number_float()) return static_cast<T>(v);
  }
  return it->get<T>();
}

std::string opt_string(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

Result<DeviceInfo> device_from_json(const json& j) {
  if (!j.is_object()) return Error{"a device entry is not an object"};
  DeviceInfo d;
  const auto index = opt_number<int>(j, "index");
  if (!index) return Error{"a device entry has no numeric \"index\""};
  d.index = *index;
  d.uuid = opt_string(j, "uuid");
  d.name = opt_string(j, "name");
  d.architecture = opt_string(j, "architecture");
  d.sm_count = opt_number<int>(j, "sm_count");
  d.mem_total_mib = opt_number<double>(j, "mem_total_mib");
  d.power_limit_w = opt_number<double>(j, "power_limit_w");
  d.max_sm_clock_mhz = opt_number<double>(j, "max_sm_clock_mhz");
  d.max_mem_clock_mhz = opt_number<double>(j, "max_mem_clock_mhz");
  d.pcie_gen = opt_number<int>(j, "pcie_gen");
  d.pcie_width = opt_number<int>(j, "pcie_width");
  d.nvlink_count = opt_number<int>(j, "nvlink_count");
  if (const auto it = j.find("mig_enabled"); it != j.end() && it->is_boolean()) {
    d.mig_enabled = it->get<bool>();
  }
  if (const auto it = j.find("unsupported"); it != j.end() && it->is_object()) {
    for (const auto& [key, reason] : it->items()) {
      if (const auto m = metric_from_key(key); m && reason.is_string()) {
        d.unsupported.push_back({*m, reason.get<std::string>()});
      }
    }
  }
  static constexpr std::array<std::string_view, 15> kKnown{"index",
                                                           "uuid",
                                                           "name",
                                                           "architecture",
                                                           "sm_count",
                                                           "mem_total_mib",
                                                           "power_limit_w",
                                                           "max_sm_clock_mhz",
                                                           "max_mem_clock_mhz",
                                                           "pcie_gen",
                                                           "pcie_width",
                                                           "nvlink_count",
                                                           "mig_enabled",
                                                           "unsupported",
                                                           ""};
  for (const auto& [key, value] : j.items()) {
    if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end()) d.extra[key] = value;
  }
  return d;
}

json device_to_json(const DeviceInfo& d) {
  json j = json::object();
  j["index"] = d.index;
  if (!d.uuid.empty()) j["uuid"] = d.uuid;
  if (!d.name.empty()) j["name"] = d.name;
  if (!d.architecture.empty()) j["architecture"] = d.architecture;
  if (d.sm_count) j["sm_count"] = *d.sm_count;
  if (d.mem_total_mib) j["mem_total_mib"] = *d.mem_total_mib;
  if (d.power_limit_w) j["power_limit_w"] = *d.power_limit_w;
  if (d.max_sm_clock_mhz) j["max_sm_clock_mhz"] = *d.max_sm_clock_mhz;
  if (d.max_mem_clock_mhz) j["max_mem_clock_mhz"] = *d.max_mem_clock_mhz;
  if (d.pcie_gen) j["pcie_gen"] = *d.pcie_gen;
  if (d.pcie_width) j["pcie_width"] = *d.pcie_width;
  if (d.nvlink_count) j["nvlink_count"] = *d.nvlink_count;
  if (d.mig_enabled) j["mig_enabled"] = *d.mig_enabled;
  if (!d.unsupported.empty()) {
    json u = json::object();
    for (const auto& entry : d.unsupported)
      u[std::string(metric_info(entry.metric).key)] = entry.reason;
    j["unsupported"] = u;
  }
  for (const auto& [key, value] : d.extra.items()) j[key] = value;
  return j;
}

Result<ProcessSample> process_from_json(const json& j) {
  if (!j.is_object()) return Error{"a \"procs\" entry is not an object"};
  ProcessSample p;
  const auto pid = opt_number<std::int64_t>(j, "pid");
  if (!pid || *pid < 0) return Error{"a \"procs\" entry has no valid \"pid\""};
  p.pid = static_cast<std::uint32_t>(*pid);
  p.name = opt_string(j, "name");
  p.used_mib = opt_number<double>(j, "used_mib");
  p.sm_util = opt_number<double>(j, "sm_util");
  p.cpu_pct = opt_number<double>(j, "cpu_pct");
  p.rss_mib = opt_number<double>(j, "rss_mib");
  p.user = opt_string(j, "user");
  p.container = opt_string(j, "container");
  p.pod = opt_string(j, "pod");
  p.cmdline = opt_string(j, "cmdline");
  if (const auto ppid = opt_number<std::int64_t>(j, "ppid"); ppid && *ppid >= 0) {
    p.ppid = static_cast<std::uint32_t>(*ppid);
  }
  // Added after the first recordings: absent in older ones, and a value of another
  // type reads as absent like every optional key.
  if (const auto it = j.find("x_slurm"); it != j.end() && it->is_object()) {
    SlurmJob s;
    s.job = opt_string(*it, "job");
    s.step = opt_string(*it, "step");
    s.user = opt_string(*it, "user");
    s.account = opt_string(*it, "account");
    s.array_job = opt_string(*it, "array_job");
    s.array_task = opt_string(*it, "array_task");
    s.from = opt_string(*it, "from");
    s.unknown = opt_string(*it, "unknown");
    p.slurm = std::move(s);
  }
  return p;
}

// "x_allocation": a list of objects; an entry without a job (Slurm) or a pod
// (Kubernetes), or of another type, is skipped (a job nobody can name is no
// owner), a field of another type reads as absent, as for x_slurm.
std::vector<GpuAllocation> allocations_from_json(const json& list) {
  std::vector<GpuAllocation> out;
  for (const auto& j : list) {
    if (!j.is_object()) continue;
    GpuAllocation a;
    a.scheduler = opt_string(j, "scheduler");
    a.job = opt_string(j, "job");
    a.user = opt_string(j, "user");
    a.account = opt_string(j, "account");
    a.partition = opt_string(j, "partition");
    a.since = opt_number<double>(j, "since");
    if (a.since && !std::isfinite(*a.since)) a.since.reset();
    a.namespace_name = opt_string(j, "namespace");
    a.pod = opt_string(j, "pod");
    a.container = opt_string(j, "container");
    if (!a.job.empty() || !a.pod.empty()) out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

Result<TraceHeader> header_from_json(const json& j) {
  if (!j.is_object()) return Error{"the header is not a JSON object"};
  const auto format = j.find("format");
  if (format == j.end() || !format->is_string() || *format != "gpu-trace") {
    return Error{"not a gpu-trace file (the header's \"format\" must be \"gpu-trace\")"};
  }
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() || *version != 1) {
    return Error{fmt::format("unsupported gpu-trace version {} (this gpulens reads version 1)",
                             version == j.end() ? std::string("(missing)") : version->dump())};
  }
  TraceHeader h;
  h.host = opt_string(j, "host");
  h.driver = opt_string(j, "driver");
  h.cpu_count = opt_number<int>(j, "cpu_count");
  h.interval_s = opt_number<double>(j, "interval_s");
  if (const auto it = j.find("devices"); it != j.end()) {
    if (!it->is_array()) return Error{"the header's \"devices\" is not a list"};
    if (it->size() > kMaxDevices) {
      return Error{
          fmt::format("the header lists {} devices (at most {})", it->size(), kMaxDevices)};
    }
    for (const auto& dj : *it) {
      auto d = device_from_json(dj);
      if (!d) return d.error();
      h.devices.push_back(std::move(*d));
    }
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "format" && key != "version" && key != "host" && key != "driver" &&
        key != "cpu_count" && key != "interval_s" && key != "devices") {
      h.extra[key] = value;
    }
  }
  return h;
}

json header_to_json(const TraceHeader& h) {
  json j = json::object();
  j["format"] = "gpu-trace";
  j["version"] = 1;
  if (!h.host.empty()) j["host"] = h.host;
  if (!h.driver.empty()) j["driver"] = h.driver;
  if (h.cpu_count) j["cpu_count"] = *h.cpu_count;
  if (h.interval_s) j["interval_s"] = *h.interval_s;
  json devices = json::array();
  for (const auto& d : h.devices) devices.push_back(device_to_json(d));
  j["devices"] = devices;
  for (const auto& [key, value] : h.extra.items()) j[key] = value;
  return j;
}

Result<Sample> sample_from_json(const json& j) {
  Sample s;
  const auto t = j.find("t");
  if (t == j.end() || !t->is_number()) return Error{"missing numeric \"t\""};
  s.t = t->get<double>();
  const auto gpu = j.find("gpu");
  if (gpu == j.end() || !gpu->is_number_integer()) return Error{"missing integer \"gpu\""};
  s.gpu = gpu->get<int>();
  for (const auto& [key, value] : j.items()) {
    if (key == "t" || key == "gpu") continue;
    if (key == "procs") {
      if (value.is_null()) continue;
      if (!value.is_array()) return Error{"\"procs\" is not a list"};
      if (value.size() > kMaxProcsPerSample) {
        return Error{fmt::format("\"procs\" lists {} processes (at most {})", value.size(),
                                 kMaxProcsPerSample)};
      }
      std::vector<ProcessSample> procs;
      procs.reserve(value.size());
      for (const auto& pj : value) {
        auto p = process_from_json(pj);
        if (!p) return p.error();
        procs.push_back(std::move(*p));
      }
      s.procs = std::move(procs);
      continue;
    }
    if (key == "x_allocation") {
      if (!value.is_array()) continue;  // reads as absent, as other x_ keys of another type
      if (value.size() > kMaxAllocationsPerSample) {
        return Error{fmt::format("\"x_allocation\" lists {} jobs (at most {})", value.size(),
                                 kMaxAllocationsPerSample)};
      }
      s.allocations = allocations_from_json(value);
      continue;
    }
    if (const auto m = metric_from_key(key)) {
      if (value.is_null()) continue;  // tolerated: some writers say null for unknown
      if (!value.is_number()) {
        return Error{fmt::format("\"{}\" must be a number, got {}", key, value.dump())};
      }
      s.values.set(*m, value.get<double>());
      continue;
    }
    s.extra[key] = value;  // unknown keys are kept, never an error
  }
  return s;
}

Mark mark_from_json(const json& j) {
  Mark m;
  // json::value() throws when the key holds another type: a marks file is the
  // job's to write, so a "t" that is not a number reads as absent.
  const auto t = j.find("t");
  m.t = t != j.end() && t->is_number() ? t->get<double>() : 0.0;
  const auto name = j.find("mark");
  if (name != j.end() && name->is_string()) m.name = name->get<std::string>();
  for (const auto& [key, value] : j.items()) {
    if (key != "t" && key != "mark") m.fields[key] = value;
  }
  return m;
}

json mark_to_json(const Mark& mark) {
  json j = json::object();
  j["t"] = std::round(mark.t * 1000.0) / 1000.0;
  j["mark"] = mark.name;
  for (const auto& [key, value] : mark.fields.items()) j[key] = value;
  return j;
}

}  // namespace gpulens

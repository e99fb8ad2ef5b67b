// SPDX-License-Identifier: Apache-2.0
#include "exposition/api_json.hpp"

#include <algorithm>

#include "core/clock_reasons.hpp"

namespace gpulens::exposition {
namespace {

template <typename T>
Json opt(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json device_json(const agent::GpuLive& g) {
  const DeviceInfo& d = g.device;
  Json j;
  j["gpu"] = d.index;
  j["uuid"] = d.uuid;
  j["name"] = d.name;
  j["architecture"] = g.limits.architecture.empty() ? d.architecture : g.limits.architecture;
  j["sm_count"] = opt(d.sm_count);
  j["mem_total_mib"] = opt(d.mem_total_mib);
  j["power_limit_w"] = opt(d.power_limit_w);
  j["max_sm_clock_mhz"] = opt(d.max_sm_clock_mhz);
  j["max_mem_clock_mhz"] = opt(d.max_mem_clock_mhz);
  j["pcie_gen"] = opt(d.pcie_gen);
  j["pcie_width"] = opt(d.pcie_width);
  j["pcie_mibs"] = opt(g.limits.pcie_mibs);
  j["nvlink_links"] = opt(g.limits.nvlink_links);
  j["nvlink_mibs"] = opt(g.limits.nvlink_mibs);
  j["mig_enabled"] = opt(d.mig_enabled);
  Json unsupported = Json::object();
  for (const auto& u : d.unsupported)
    unsupported[std::string(metric_info(u.metric).key)] = u.reason;
  j["unsupported"] = std::move(unsupported);
  return j;
}

Json slurm_json(const SlurmJob& s) {
  return {{"job", s.job},         {"step", s.step},           {"user", s.user},
          {"account", s.account}, {"array_job", s.array_job}, {"array_task", s.array_task},
          {"from", s.from},       {"unknown", s.unknown}};
}

Json processes_json(const agent::LiveSnapshot& snap, const std::vector<ProcessSample>& procs,
                    bool show_cmdline) {
  Json out = Json::array();
  for (const auto& p : procs) {
    Json j;
    j["pid"] = p.pid;
    j["name"] = p.name;
    j["used_mib"] = opt(p.used_mib);
    j["sm_util"] = opt(p.sm_util);
    j["cpu_pct"] = opt(p.cpu_pct);
    j["rss_mib"] = opt(p.rss_mib);
    j["user"] = p.user;
    j["container"] = p.container;
    j["pod"] = p.pod;
    // Names from the kubelet's logs, beside the IDs that the cgroup gives.
    if (const auto kube = agent::kube_of_process(snap, p)) {
      j["kube"] = {
          {"namespace", kube->namespace_name}, {"pod", kube->pod}, {"container", kube->container}};
    }
    if (p.slurm) j["slurm"] = slurm_json(*p.slurm);
    if (show_cmdline) j["cmdline"] = p.cmdline;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

Json version_json() {
  Json j;
  j["name"] = "gpulens";
  j["version"] = GPULENS_VERSION;
  j["api"] = "v1";
  return j;
}

Json devices_json(const agent::LiveSnapshot& snap) {
  Json j;
  j["hostname"] = snap.hostname;
  j["driver"] = snap.driver;
  j["cpu_count"] = opt(snap.cpu_count);
  j["interval_s"] = opt(snap.interval_s);
  Json list = Json::array();
  for (const auto& g : snap.gpus) list.push_back(device_json(g));
  j["devices"] = std::move(list);
  return j;
}

Json latest_json(const agent::LiveSnapshot& snap, bool show_cmdline) {
  Json j;
  j["t"] = snap.t > 0 ? Json(snap.t) : Json(nullptr);
  j["seq"] = snap.seq;
  j["hostname"] = snap.hostname;
  j["host"] = {{"cpu_pct", opt(snap.host_cpu_pct)}, {"cpu_count", opt(snap.cpu_count)}};
  Json gpus = Json::array();
  for (const auto& g : snap.gpus) {
    Json x;
    x["gpu"] = g.device.index;
    x["uuid"] = g.device.uuid;
    x["name"] = g.device.name;
    x["t"] = g.sample ? Json(g.sample->t) : Json(nullptr);
    x["metrics"] = g.sample ? Json(g.sample->values) : Json::object();
    x["efficiency"] = opt(g.efficiency);
    Json state;
    state["id"] = g.state;
    state["meaning"] = g.state_meaning;
    state["summary"] = g.summary;
    state["confidence"] = g.confidence;
    state["since"] = g.state_since > 0 ? Json(g.state_since) : Json(nullptr);
    state["throttled"] = g.throttled;
    state["throttle_cause"] = g.throttle_cause;
    state["fixes"] = g.fixes;
    state["evidence"] = Json(g.evidence);
    x["state"] = std::move(state);
    const auto mask = g.sample ? g.sample->values.get(Metric::ClockEventReasons) : std::nullopt;
    Json reasons = Json::array();
    if (mask) {
      for (const auto& r : decode_clock_reasons(static_cast<std::uint64_t>(*mask)))
        reasons.push_back({{"id", r.id}, {"words", r.words}});
    }
    x["clock_reasons"] = std::move(reasons);
    x["limits"] = device_json(g);
    if (g.sample && g.sample->allocations) {
      Json held = Json::array();
      for (const auto& a : *g.sample->allocations) {
        if (a.scheduler == "kubernetes") {
          held.push_back({{"scheduler", a.scheduler},
                          {"namespace", a.namespace_name},
                          {"pod", a.pod},
                          {"container", a.container}});
          continue;
        }
        held.push_back({{"scheduler", a.scheduler},
                        {"job", a.job},
                        {"user", a.user},
                        {"account", a.account},
                        {"partition", a.partition},
                        {"since", opt(a.since)}});
      }
      x["allocation"] = std::move(held);
    } else {
      x["allocation"] = nullptr;
    }
    x["processes"] = g.sample && g.sample->procs
                         ? processes_json(snap, *g.sample->procs, show_cmdline)
                         : Json(nullptr);
    Json alerts = Json::array();
    for (const auto& f : snap.firing) {
      if (f.alert.gpu == g.device.index) alerts.push_back(f.alert.rule);
    }
    x["alerts"] = std::move(alerts);
    x["lost"] = g.lost;
    x["last_xid"] = opt(g.last_xid);
    gpus.push_back(std::move(x));
  }
  j["gpus"] = std::move(gpus);
  return j;
}

Json firing_json(const agent::LiveSnapshot& snap) {
  Json out = Json::array();
  for (const auto& f : snap.firing) {
    Json j;
    j["rule"] = f.alert.rule;
    j["gpu"] = f.alert.gpu;
    j["severity"] = diagnosis::severity_id(f.alert.severity);
    j["since"] = f.alert.since;
    j["fired_at"] = f.alert.fired_at;
    j["message"] = f.alert.message;
    j["count"] = f.alert.count;
    j["evidence"] = Json(f.evidence);
    j["fixes"] = f.fixes;
    out.push_back(std::move(j));
  }
  return out;
}

Json stored_event_json(const store::StoredAlertEvent& e) {
  Json j;
  j["t"] = e.t;
  j["kind"] = e.kind;
  j["rule"] = e.rule;
  j["gpu"] = e.gpu;
  j["severity"] = e.severity;
  j["since"] = e.since;
  j["message"] = e.message;
  j["count"] = e.count;
  return j;
}

// A live event is written as the history stores it, so that /api/v1/alerts
// reads the same from memory and from the database.
Json event_json(const diagnosis::AlertEvent& e) {
  return stored_event_json({e.t, e.gpu, e.rule, std::string(diagnosis::alert_kind_id(e.kind)),
                            std::string(diagnosis::severity_id(e.severity)), e.since, e.message,
                            e.count});
}
namespace {

// Where the agent took "which job holds which GPU" from, and why it fell back to
// the processes on the GPUs when it did (docs/slurm.md, "Allocation").
Json allocation_health_json(const sources::AllocationScan& scan) {
  Json j;
  const bool kube = scan.scheduler == "kubernetes";
  j["scheduler"] = scan.scheduler;
  j["source"] = !scan.usable ? "processes" : kube ? "pod-resources" : "prolog";
  j["fallback"] = scan.fallback;
  j["absent"] = scan.absent;
  if (kube) {
    j["pods"] = scan.jobs;
    j["last_error"] = scan.last_error;
    j["call_s"] = opt(scan.call_s);
  } else {
    j["jobs"] = scan.jobs;
    j["index_order"] = scan.index_order;
  }
  Json problems = Json::object();
  for (std::size_t i = 0; i < sources::kAllocationProblemCount; ++i) {
    problems[std::string(sources::allocation_problem_id(
        static_cast<sources::AllocationProblem>(i)))] = scan.problems[i];
  }
  j["skipped"] = std::move(problems);
  j["last_problem"] = scan.last_problem;
  return j;
}

// Where the GPUs without GPM get their profiling counters (docs/dcgm.md): "state" is
// watching, reconnecting or unavailable, and "detail" says why when not watching.
Json profiler_health_json(const sources::ProfilerStatus& p) {
  Json j;
  j["source"] = p.source;
  j["state"] = p.state;
  j["detail"] = p.detail;
  j["address"] = p.address;
  j["gpus"] = p.gpus;
  j["notes"] = p.notes;
  j["sessions"] = p.sessions;
  j["lost"] = p.lost;
  j["blank_values"] = p.blank_values;
  j["stale_values"] = p.stale_values;
  return j;
}

}  // namespace

std::string health_status(const agent::LiveSnapshot& snap,
                          const std::optional<store::StoreStatus>& store, double now) {
  if (!snap.source.error.empty()) return "failing";
  if (snap.source.live) {
    // Live ticks come every interval; three missed intervals (and at least
    // 30 s) of silence means the sampler is stuck.
    const double limit = std::max(30.0, 3 * snap.interval_s.value_or(1.0));
    const double since =
        snap.source.last_tick_wall > 0 ? snap.source.last_tick_wall : snap.started_at;
    if (now - since > limit) return "failing";
  }
  if (store && !store->healthy) return "degraded";
  return "ok";
}

Json health_json(const agent::LiveSnapshot& snap, const std::optional<store::StoreStatus>& store,
                 double now) {
  Json j;
  j["status"] = health_status(snap, store, now);
  j["uptime_s"] = std::max(0.0, now - snap.started_at);
  Json source;
  source["live"] = snap.source.live;
  source["description"] = snap.source.description;
  source["ticks"] = snap.source.ticks;
  source["ended"] = snap.source.ended;
  source["error"] = snap.source.error;
  source["last_sample_t"] = snap.t > 0 ? Json(snap.t) : Json(nullptr);
  if (const auto& s = snap.source.sampler) {
    source["timeouts"] = s->timeouts;
    source["missed_ticks"] = s->missed_ticks;
    Json slurm = Json::object();
    for (std::size_t i = 0; i < sources::kSlurmProblemCount; ++i) {
      slurm[std::string(sources::slurm_problem_id(static_cast<sources::SlurmProblem>(i)))] =
          s->slurm_problems[i];
    }
    source["slurm_problems"] = std::move(slurm);
    if (s->allocations) source["allocation"] = allocation_health_json(*s->allocations);
    if (s->kube_allocations) {
      source["kube_allocation"] = allocation_health_json(*s->kube_allocations);
    }
    if (s->profiler) source["profiler"] = profiler_health_json(*s->profiler);
  }
  source["sample_cpu_s"] = opt(snap.source.sample_cpu_s);
  j["source"] = std::move(source);
  Json h;
  h["enabled"] = store.has_value();
  if (store) {
    h["path"] = store->path;
    h["healthy"] = store->healthy;
    h["error"] = store->error;
    h["error_since"] = opt(store->error_since);
    h["samples_written"] = store->samples_written;
    h["write_errors"] = store->write_errors;
    h["dropped_samples"] = store->dropped_samples;
    h["backlog"] = store->backlog;
    h["file_bytes"] = store->stats.file_bytes;
    h["wal_bytes"] = store->stats.wal_bytes;
    h["last_commit"] = opt(store->last_commit);
  }
  j["history"] = std::move(h);
  return j;
}

Json history_json(const store::HistoryResult& r) {
  Json j;
  j["from"] = r.from;
  j["to"] = r.to;
  j["step"] = r.step;
  j["source"] = r.source;
  Json series = Json::array();
  for (const auto& s : r.series) {
    Json g;
    g["gpu"] = s.gpu;
    g["t"] = s.t;
    Json metrics = Json::object();
    for (const auto& m : s.metrics) {
      Json x;
      auto values = [](const std::vector<std::optional<double>>& v) {
        Json a = Json::array();
        for (const auto& e : v) a.push_back(opt(e));
        return a;
      };
      x["mean"] = values(m.mean);
      if (!m.min.empty()) x["min"] = values(m.min);
      if (!m.max.empty()) x["max"] = values(m.max);
      metrics[std::string(metric_info(m.metric).key)] = std::move(x);
    }
    g["metrics"] = std::move(metrics);
    series.push_back(std::move(g));
  }
  j["series"] = std::move(series);
  return j;
}

Json timeline_json(const store::TimelineResult& r) {
  Json j;
  j["source"] = r.source;
  Json runs = Json::array();
  for (const auto& run : r.runs) {
    runs.push_back({{"gpu", run.gpu},
                    {"start", run.start},
                    {"end", run.end},
                    {"state", run.state},
                    {"throttled_share", run.throttled_share}});
  }
  j["runs"] = std::move(runs);
  return j;
}

}  // namespace gpulens::exposition

// SPDX-License-Identifier: Apache-2.0
// Per-process series (opt-in) and the agent's own health.
#include "exposition/exposition.hpp"
#include "exposition/prom_writer.hpp"

namespace gpulens::exposition {
namespace {}  // namespace

void render_process_metrics(std::string& out, const agent::LiveSnapshot& snap) {
  PromWriter w(out);
  struct Row {
    std::string labels;
    const ProcessSample* p;
  };
  std::vector<Row> rows;
  for (const auto& g : snap.gpus) {
    if (!g.sample || !g.sample->procs) continue;
    const std::string base = gpu_identity_labels(snap, g);
    for (const auto& p : *g.sample->procs) {
      std::string l = base;
      append_label(l, "pid", std::to_string(p.pid));
      append_label(l, "process", p.name);
      // IDs from the cgroup, names from the kubelet's logs (empty when unknown):
      // namespace/pod/container join with kube-state-metrics and cAdvisor series.
      append_label(l, "container_id", p.container);
      append_label(l, "pod_uid", p.pod);
      const sources::KubeRef names = agent::kube_of_process(snap, p).value_or(sources::KubeRef{});
      append_label(l, "namespace", names.namespace_name);
      append_label(l, "pod", names.pod);
      append_label(l, "container", names.container);
      // The Slurm job and account, never on per-GPU series: each process series has
      // a pid already, so these add no series of their own (docs/slurm.md).
      const SlurmJob slurm = p.slurm.value_or(SlurmJob{});
      append_label(l, "slurm_job", slurm.job);
      append_label(l, "slurm_step", slurm.step);
      append_label(l, "slurm_account", slurm.account);
      rows.push_back({std::move(l), &p});
    }
  }
  struct Family {
    const char* name;
    const char* help;
    std::optional<double> ProcessSample::*reading;
    // From the reading's unit to the family's: reading / divisor (1 / kMib is a
    // power of two, so MiB to bytes stays exact).
    double divisor;
  };
  static constexpr Family kFamilies[] = {
      {"gpulens_process_memory_used_bytes", "Device memory held by a process on this GPU",
       &ProcessSample::used_mib, 1 / kMib},
      {"gpulens_process_sm_utilization_ratio",
       "Share of the GPU's SM time used by a process (NVML per-process utilization)",
       &ProcessSample::sm_util, 100.0}};
  for (const auto& f : kFamilies) {
    bool any = false;
    for (const auto& r : rows) {
      const auto& reading = r.p->*f.reading;
      if (!reading) continue;
      if (!any) w.family(f.name, "gauge", f.help);
      any = true;
      w.sample(f.name, r.labels, *reading / f.divisor);
    }
  }
}

namespace {

// The agent itself: its version, start, and how far its source got.
void write_agent_metrics(PromWriter& w, const agent::LiveSnapshot& snap) {
  w.family("gpulens_build_info", "gauge", "Always 1: the agent's version");
  w.sample("gpulens_build_info", render_labels({{"version", GPULENS_VERSION}}), 1);
  w.family("gpulens_agent_start_time_seconds", "gauge", "When the agent started (Unix time)");
  w.sample("gpulens_agent_start_time_seconds", "", snap.started_at);
  w.family("gpulens_source_ticks_total", "counter", "Ticks read from the source");
  w.sample("gpulens_source_ticks_total", "", static_cast<double>(snap.source.ticks));
  w.family("gpulens_source_ended", "gauge",
           "1 once a replayed recording reached its end (the last values stay served)");
  w.sample("gpulens_source_ended", "", snap.source.ended ? 1 : 0);
  if (snap.t > 0) {
    w.family("gpulens_last_sample_timestamp_seconds", "gauge",
             "Time of the newest sample (Unix time; the recording's time on a replay)");
    w.sample("gpulens_last_sample_timestamp_seconds", "", snap.t);
  }
}

// What sampling costs and misses: timeouts, CPU time, the last sample's cost, and per
// live GPU the readings that failed (NVML errors).
void write_sampler_metrics(PromWriter& w, const agent::LiveSnapshot& snap) {
  if (const auto& s = snap.source.sampler) {
    w.family("gpulens_sampler_timeouts_total", "counter",
             "Device samples that did not answer within the tick (a hung NVML call)");
    w.sample("gpulens_sampler_timeouts_total", "", static_cast<double>(s->timeouts));
    w.family("gpulens_sampler_missed_ticks_total", "counter",
             "Ticks skipped because a tick overran its interval");
    w.sample("gpulens_sampler_missed_ticks_total", "", static_cast<double>(s->missed_ticks));
    w.family("gpulens_sampler_cpu_seconds_total", "counter",
             "CPU time spent sampling, by part (classic NVML every tick, slow counters read "
             "every few seconds or minutes, GPM, processes, procfs, host, events)");
    const std::pair<const char*, double> parts[] = {
        {"classic", s->cost.classic_s}, {"slow", s->cost.slow_s},     {"gpm", s->cost.gpm_s},
        {"processes", s->cost.procs_s}, {"procfs", s->cost.procfs_s}, {"host", s->host_s},
        {"events", s->events_s}};
    for (const auto& [part, secs] : parts)
      w.sample("gpulens_sampler_cpu_seconds_total", "", "part", part, secs);
    w.family("gpulens_slurm_attribution_problems_total", "counter",
             "GPU processes whose Slurm job could not be (fully) told, by reason "
             "(docs/slurm.md)");
    for (std::size_t i = 0; i < sources::kSlurmProblemCount; ++i) {
      const auto reason = sources::slurm_problem_id(static_cast<sources::SlurmProblem>(i));
      w.sample("gpulens_slurm_attribution_problems_total", "", "reason", std::string(reason),
               static_cast<double>(s->slurm_problems[i]));
    }
    // Only where a GPU lacks GPM and --dcgm is not off (docs/dcgm.md): a fleet alerts
    // on 0 here rather than on GPUs that read "busy, how well not measured".
    if (const auto& p = s->profiler) {
      w.family("gpulens_profiler_watching", "gauge",
               "1 while the profiling counters of GPUs without GPM are read from their source "
               "(DCGM), else 0; /api/v1/health says why");
      w.sample("gpulens_profiler_watching", "", "source", p->source,
               p->state == "watching" ? 1.0 : 0.0);
      w.family("gpulens_profiler_sessions_lost_total", "counter",
               "Sessions with the profiling source lost mid-run (a DCGM host engine that went "
               "away)");
      w.sample("gpulens_profiler_sessions_lost_total", "", "source", p->source,
               static_cast<double>(p->lost));
      w.family("gpulens_profiler_values_dropped_total", "counter",
               "Profiling values the source returned but gpulens did not use, by reason (blank: "
               "DCGM's blank sentinel or an error status; stale: too old)");
      const std::string source = render_labels({{"source", p->source}});
      w.sample("gpulens_profiler_values_dropped_total", source, "reason", "blank",
               static_cast<double>(p->blank_values));
      w.sample("gpulens_profiler_values_dropped_total", source, "reason", "stale",
               static_cast<double>(p->stale_values));
    }
  }
  if (snap.source.sample_cpu_s) {
    w.family("gpulens_sample_duration_seconds", "gauge",
             "CPU time one GPU's sample took at the last tick (all NVML and GPM calls)");
    w.sample("gpulens_sample_duration_seconds", "", *snap.source.sample_cpu_s);
  }
  if (snap.source.live) {
    w.family("gpulens_collect_errors_total", "counter",
             "Metrics a GPU reported before that failed to read since (NVML errors)");
    for (const auto& g : snap.gpus)
      w.sample("gpulens_collect_errors_total", gpu_labels(snap, g),
               static_cast<double>(g.collect_errors));
  }
}

void write_http_metrics(PromWriter& w, const SelfStats& self) {
  w.family("gpulens_scrape_duration_seconds", "gauge",
           "How long the previous /metrics answer took to render");
  w.sample("gpulens_scrape_duration_seconds", "", self.last_scrape_s);
  if (!self.http.empty()) {
    w.family("gpulens_http_requests_total", "counter",
             "HTTP requests answered, by handler and code");
    for (const auto& h : self.http) {
      std::string l;
      append_label(l, "handler", h.handler);
      append_label(l, "code", std::to_string(h.code));
      w.sample("gpulens_http_requests_total", l, static_cast<double>(h.count));
    }
  }
}

void write_store_metrics(PromWriter& w, const SelfStats& self) {
  w.family("gpulens_store_up", "gauge",
           "1 while history is written without error, 0 when it fails or is disabled");
  w.sample("gpulens_store_up", "", self.store && self.store->healthy ? 1 : 0);
  if (self.store) {
    const auto& st = *self.store;
    w.family("gpulens_store_size_bytes", "gauge", "History database file size (without the WAL)");
    w.sample("gpulens_store_size_bytes", "", static_cast<double>(st.stats.file_bytes));
    w.family("gpulens_store_samples_written_total", "counter", "GPU samples written to history");
    w.sample("gpulens_store_samples_written_total", "", static_cast<double>(st.samples_written));
    w.family("gpulens_store_write_errors_total", "counter", "Failed history writes");
    w.sample("gpulens_store_write_errors_total", "", static_cast<double>(st.write_errors));
    w.family("gpulens_store_dropped_samples_total", "counter",
             "Samples never written because history failed for too long");
    w.sample("gpulens_store_dropped_samples_total", "", static_cast<double>(st.dropped_samples));
    w.family("gpulens_store_commit_duration_seconds", "gauge", "How long the last commit took");
    w.sample("gpulens_store_commit_duration_seconds", "", st.last_commit_s);
  }
}

// The jobs' kernel summaries (docs/kernels-agent.md): what came and why some were refused.
void write_kernel_intake_metrics(PromWriter& w, const SelfStats& self) {
  if (!self.kernels) return;
  const agent::IntakeCounters& c = self.kernels->counters;
  w.family("gpulens_kernel_summaries_total", "counter",
           "Kernel summaries received from jobs, by result (accepted or why refused)");
  const std::pair<const char*, std::uint64_t> results[] = {{"accepted", c.accepted},
                                                           {"oversized", c.oversized},
                                                           {"no_credentials", c.no_credentials},
                                                           {"rate_limited", c.rate_limited},
                                                           {"malformed", c.malformed},
                                                           {"not_on_gpu", c.not_on_gpu}};
  for (const auto& [result, n] : results) {
    std::string l;
    append_label(l, "result", result);
    w.sample("gpulens_kernel_summaries_total", l, static_cast<double>(n));
  }
  w.family("gpulens_kernel_summaries_sender_dropped_total", "counter",
           "Summaries jobs said they dropped because this agent was absent or full");
  w.sample("gpulens_kernel_summaries_sender_dropped_total", "",
           static_cast<double>(c.sender_dropped));
  w.family("gpulens_kernel_launch_records_total", "counter",
           "Launch-count records accepted from jobs (GPULENS_LAUNCHES_AGENT); also in "
           "gpulens_kernel_summaries_total{result=\"accepted\"}");
  w.sample("gpulens_kernel_launch_records_total", "", static_cast<double>(c.launch_records));
  w.family("gpulens_kernel_windows_stored", "gauge",
           "Kernel summary windows held in memory (bounded per GPU)");
  w.sample("gpulens_kernel_windows_stored", "", static_cast<double>(self.kernels->stored));
  if (const auto& h = self.kernels->history; h.enabled) {
    w.family("gpulens_kernel_windows_history_total", "counter",
             "Kernel windows and the SQLite history, by result: written; dropped (the "
             "writer's queue was full); skipped (a stored row corrupt or oversized on start)");
    const std::pair<const char*, std::uint64_t> history[] = {
        {"written", h.written}, {"dropped", h.dropped}, {"skipped", h.skipped}};
    for (const auto& [result, n] : history) {
      std::string l;
      append_label(l, "result", result);
      w.sample("gpulens_kernel_windows_history_total", l, static_cast<double>(n));
    }
  }
  if (self.kernel_series) {
    w.family("gpulens_kernel_series_retired_total", "counter",
             "Per-kernel series dropped: their kernel got no time for 10 minutes, or a kernel "
             "with more recent time took their slot (the churn of gpulens_kernel_seconds_total)");
    w.sample("gpulens_kernel_series_retired_total", "",
             static_cast<double>(self.kernel_series->retired));
  }
}

// The names every Prometheus client library uses for its own process.
void write_process_metrics(PromWriter& w, const SelfStats& self) {
  if (self.cpu_seconds) {
    w.family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent");
    w.sample("process_cpu_seconds_total", "", *self.cpu_seconds);
  }
  if (self.rss_bytes) {
    w.family("process_resident_memory_bytes", "gauge", "Resident memory size");
    w.sample("process_resident_memory_bytes", "", *self.rss_bytes);
  }
  if (self.start_time) {
    w.family("process_start_time_seconds", "gauge", "Start time of the process (Unix time)");
    w.sample("process_start_time_seconds", "", *self.start_time);
  }
}

}  // namespace

void render_self_metrics(std::string& out, const agent::LiveSnapshot& snap, const SelfStats& self) {
  PromWriter w(out);
  write_agent_metrics(w, snap);
  write_sampler_metrics(w, snap);
  write_http_metrics(w, self);
  write_store_metrics(w, self);
  write_kernel_intake_metrics(w, self);
  write_process_metrics(w, self);
}

}  // namespace gpulens::exposition

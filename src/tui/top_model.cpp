// SPDX-License-Identifier: Apache-2.0
#include "tui/top_model.hpp"

#include <algorithm>

#include "core/clock_reasons.hpp"
#include "core/metric.hpp"
#include "diagnosis/engine.hpp"
#include "diagnosis/state.hpp"

namespace gpulens::tui {
namespace {

void push_history(std::deque<std::optional<double>>& history, std::optional<double> value,
                  std::size_t length) {
  history.push_back(value);
  while (history.size() > length) history.pop_front();
}

// Strips the "n/a: " that probes put in front of their reasons.
std::string reason_words(const std::string& reason) {
  constexpr std::string_view prefix = "n/a: ";
  if (reason.rfind(prefix, 0) == 0) return reason.substr(prefix.size());
  return reason;
}

std::string container_label(const ProcessSample& p) {
  if (!p.pod.empty()) return "pod:" + p.pod.substr(0, 8);
  return p.container.substr(0, 12);
}

std::string slurm_label(const ProcessSample& p) {
  if (!p.slurm) return {};
  if (p.slurm->job.empty()) return "slurm:?";
  return p.slurm->step.empty() ? p.slurm->job : p.slurm->job + "." + p.slurm->step;
}

std::optional<double> number_at(const nlohmann::json& entry, Metric m) {
  const auto it = entry.find(std::string(metric_info(m).key));
  if (it == entry.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// The sample's x_mig (one object per GPU instance: "gpu_instance" and metric keys,
// as sources/nvml/nvml_gpm.cpp writes them) folded into the GPU's rows. Instances
// keep their row once seen; a tick without one shows it unmeasured.
void update_mig(GpuView& g, const nlohmann::json& extra) {
  for (MigView& m : g.mig) {
    const long id = m.gpu_instance;
    m = MigView{};
    m.gpu_instance = id;
  }
  const auto it = extra.find("x_mig");
  if (it == extra.end() || !it->is_array()) return;
  for (const auto& entry : *it) {
    if (!entry.is_object()) continue;
    const auto id = entry.find("gpu_instance");
    if (id == entry.end() || !id->is_number_integer()) continue;
    const long gi = id->get<long>();
    auto at = std::find_if(g.mig.begin(), g.mig.end(),
                           [gi](const MigView& m) { return m.gpu_instance >= gi; });
    if (at == g.mig.end() || at->gpu_instance != gi) {
      at = g.mig.insert(at, MigView{});
      at->gpu_instance = gi;
    }
    at->sm_active = number_at(entry, Metric::SmActive);
    at->occupancy = number_at(entry, Metric::SmOccupancy);
    at->tensor = number_at(entry, Metric::TensorActive);
    at->dram = number_at(entry, Metric::DramActive);
    at->fp64 = number_at(entry, Metric::Fp64Active);
    at->fp32 = number_at(entry, Metric::Fp32Active);
    at->fp16 = number_at(entry, Metric::Fp16Active);
    at->pcie_rx = number_at(entry, Metric::PcieRxMibs);
    at->pcie_tx = number_at(entry, Metric::PcieTxMibs);
    at->nvlink_rx = number_at(entry, Metric::NvlinkRxMibs);
    at->nvlink_tx = number_at(entry, Metric::NvlinkTxMibs);
  }
}

}  // namespace

ModelBuilder::ModelBuilder(const TraceHeader& header, std::size_t history_length)
    : history_length_(std::max<std::size_t>(history_length, 1)), header_(header) {
  model_.host = header.host;
  model_.driver = header.driver;
  if (header.interval_s) model_.interval_s = *header.interval_s;
  for (const auto& d : header.devices) gpu(d.index);
}

GpuView& ModelBuilder::gpu(int index) {
  for (auto& g : model_.gpus) {
    if (g.index == index) return g;
  }
  GpuView g;
  g.index = index;
  if (const DeviceInfo* d = header_.device(index)) {
    g.name = d->name;
    g.mem_total = d->mem_total_mib;
    g.power_limit = d->power_limit_w;
    g.max_sm_clock = d->max_sm_clock_mhz;
    g.sm_count = d->sm_count;
    g.has_nvlink = d->nvlink_count.value_or(0) > 0;
    if (const std::string* why = d->unsupported_reason(Metric::SmActive)) {
      g.sm_unsupported = reason_words(*why);
    }
  }
  const auto at = std::find_if(model_.gpus.begin(), model_.gpus.end(),
                               [index](const GpuView& v) { return v.index > index; });
  return *model_.gpus.insert(at, std::move(g));
}

namespace {

// "Slurm job 101 (alice)", "pod ml/train-0", "Slurm jobs 7, 9", "pods ml/a, ml/b".
std::string holder_name(const GpuAllocation& a) {
  if (a.scheduler == "kubernetes") return a.namespace_name + "/" + a.pod;
  return a.job;
}

std::string held_by_text(const std::vector<GpuAllocation>& jobs) {
  if (jobs.empty()) return "no job";
  const auto kind = [](const GpuAllocation& a, bool plural) {
    if (a.scheduler == "kubernetes") return plural ? "pods " : "pod ";
    return plural ? "Slurm jobs " : "Slurm job ";
  };
  if (jobs.size() == 1) {
    const auto& a = jobs.front();
    return kind(a, false) + holder_name(a) + (a.user.empty() ? std::string() : " (" + a.user + ")");
  }
  const bool one_kind = std::all_of(jobs.begin(), jobs.end(), [&](const GpuAllocation& a) {
    return a.scheduler == jobs.front().scheduler;
  });
  std::string names;
  for (const auto& a : jobs) {
    names +=
        (names.empty() ? "" : ", ") + (one_kind ? std::string() : kind(a, false)) + holder_name(a);
  }
  return one_kind ? kind(jobs.front(), true) + names : names;
}

}  // namespace

void ModelBuilder::on_tick(const Tick& tick, const diagnosis::DiagnosisEngine* engine) {
  if (tick.samples.empty()) return;
  ++ticks_;
  model_.t = tick.t;
  model_.diagnosis = engine != nullptr;
  bool procs_changed = false;
  for (const Sample& s : tick.samples) {
    GpuView& g = gpu(s.gpu);
    g.util = s.get(Metric::GpuUtil);
    g.sm_active = s.get(Metric::SmActive);
    g.occupancy = s.get(Metric::SmOccupancy);
    g.tensor = s.get(Metric::TensorActive);
    g.dram = s.get(Metric::DramActive);
    g.pcie_rx = s.get(Metric::PcieRxMibs);
    g.pcie_tx = s.get(Metric::PcieTxMibs);
    g.nvlink_rx = s.get(Metric::NvlinkRxMibs);
    g.nvlink_tx = s.get(Metric::NvlinkTxMibs);
    if (g.nvlink_rx.value_or(0) > 0 || g.nvlink_tx.value_or(0) > 0) g.has_nvlink = true;
    g.mem_used = s.get(Metric::MemUsedMib);
    g.power = s.get(Metric::PowerW);
    g.temp = s.get(Metric::TempC);
    g.sm_clock = s.get(Metric::SmClockMhz);
    const auto reasons = s.get(Metric::ClockEventReasons);
    g.clock_reason = reasons ? clock_reason_short(static_cast<std::uint64_t>(*reasons)) : "";
    push_history(g.util_history, g.util, history_length_);
    push_history(g.sm_history, g.sm_active, history_length_);
    update_mig(g, s.extra);
    g.held_by = s.allocations ? held_by_text(*s.allocations) : "";
    if (s.procs) {
      model_.procs_listed = true;
      auto& listed = procs_[s.gpu];
      listed.clear();
      for (const ProcessSample& p : *s.procs) {
        listed.push_back({p, start_time_ ? start_time_(p.pid) : std::nullopt});
      }
      procs_changed = true;
    }
  }
  if (procs_changed) rebuild_processes();
  if (engine == nullptr) return;
  for (GpuView& g : model_.gpus) {
    const diagnosis::GpuStatus& st = engine->status(g.index);
    if (!st.seen) continue;
    const diagnosis::GpuBrief brief = engine->brief(g.index);
    g.state = brief.state;
    g.state_words = std::string(diagnosis::state_meaning(st.state.state));
    g.confidence = brief.confidence;
    g.confidence_level = std::string(diagnosis::confidence_level(brief.confidence));
    g.state_for_s = std::max(0.0, st.t - st.state_since);
    g.throttled = brief.throttled;
    g.throttle_cause = brief.throttle_cause;
    g.summary = brief.summary;
    const auto fixes = engine->fixes(g.index);
    g.fix = fixes.empty() ? "" : fixes.front();
    auto firing = engine->firing(g.index);
    std::stable_sort(firing.begin(), firing.end(),
                     [](const diagnosis::ActiveAlert& a, const diagnosis::ActiveAlert& b) {
                       return a.severity > b.severity;
                     });
    g.alerts.clear();
    g.critical = false;
    for (const auto& a : firing) {
      g.alerts.push_back(a.message.empty() ? a.rule : a.message);
      if (a.severity == diagnosis::Severity::Critical) g.critical = true;
    }
  }
}

void ModelBuilder::rebuild_processes() {
  model_.procs.clear();
  for (const auto& [index, list] : procs_) {
    for (const auto& [p, start_ticks] : list) {
      ProcView v;
      v.pid = p.pid;
      v.user = p.user;
      v.gpu = index;
      v.mem_mib = p.used_mib;
      v.sm_pct = p.sm_util;
      v.cpu_pct = p.cpu_pct;
      v.rss_mib = p.rss_mib;
      v.container = container_label(p);
      v.job = slurm_label(p);
      if (p.slurm) v.account = p.slurm->account;
      v.command = p.cmdline.empty() ? p.name : p.cmdline;
      v.name = p.name;
      v.start_ticks = start_ticks;
      model_.procs.push_back(std::move(v));
    }
  }
}

}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
#include "verdict/usage.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpulens::verdict {
namespace {

// The same time accounting as the diagnosis report (diagnosis/timeline.cpp), so that
// funnel hours and state shares describe the same seconds: a sample covers the
// time since the previous sample of its GPU, at most three intervals (a gap in
// the recording is not time the GPU was seen doing anything).
struct Clock {
  double typical_dt;
  double max_dt;
  std::map<int, double> last_t;

  explicit Clock(const TraceHeader& h) {
    const double interval = h.interval_s.value_or(0);
    typical_dt = interval > 0 ? interval : 1.0;
    max_dt = interval > 0 ? 3 * interval : 5.0;
  }
  double dt(const Sample& s) {
    const auto prev = last_t.find(s.gpu);
    double d = prev == last_t.end() ? typical_dt : s.t - prev->second;
    last_t[s.gpu] = s.t;
    return std::clamp(d, 0.0, max_dt);
  }
};

std::optional<bool> held(const Sample& s, double held_memory_mib) {
  const bool kernel = s.values.value_or(Metric::GpuUtil, 0) > 0;
  // The scheduler's word first: a job holds a GPU from its prolog to its epilog,
  // running anything or nothing; a process there outside any job holds it too.
  if (s.allocations) return !s.allocations->empty() || (s.procs && !s.procs->empty()) || kernel;
  if (s.procs) return !s.procs->empty() || kernel;
  if (const auto mem = s.get(Metric::MemUsedMib)) return *mem >= held_memory_mib || kernel;
  if (s.values.has(Metric::GpuUtil)) return kernel;
  return std::nullopt;
}

// Energy from the cumulative counter where it was read, and from power x time
// where it was not (the collector reads the slow counter rarely and the power
// in between); a counter that went backwards (driver reload) is not trusted.
struct EnergyMeter {
  double counter_j = 0;
  double power_j = 0;
  double pending_j = 0;  // power integral since the last counter reading
  bool any = false;
  std::optional<double> last_mj;

  void add(const Sample& s, double dt) {
    if (const auto p = s.get(Metric::PowerW)) {
      pending_j += *p * dt;
      any = true;
    }
    if (const auto e = s.get(Metric::EnergyMj)) {
      any = true;
      if (last_mj && *e >= *last_mj) {
        counter_j += (*e - *last_mj) / 1000.0;
      } else {
        power_j += pending_j;
      }
      pending_j = 0;
      last_mj = *e;
    }
  }
  std::optional<double> total() const {
    if (!any) return std::nullopt;
    return counter_j + power_j + pending_j;
  }
  std::string basis() const {
    return counter_j >= power_j + pending_j ? "energy counter" : "power integral";
  }
};

}  // namespace

std::optional<double> Weighted::ratio() const {
  if (measured_s <= 0) return std::nullopt;
  return active_s / measured_s;
}

std::string_view allocated_basis_id(AllocatedBasis basis) {
  switch (basis) {
    case AllocatedBasis::Scheduler:
      return "scheduler";
    case AllocatedBasis::Processes:
      return "processes";
    case AllocatedBasis::Memory:
      return "memory";
    case AllocatedBasis::Activity:
      return "activity";
  }
  return "activity";
}

std::vector<GpuUsage> measure_usage(const Trace& trace, const std::vector<int>& gpus,
                                    const UsageOptions& options) {
  std::vector<GpuUsage> out;
  std::map<int, std::size_t> slot;
  for (int g : gpus) {
    slot[g] = out.size();
    GpuUsage u;
    u.gpu = g;
    if (const auto* d = trace.header.device(g)) u.name = d->name;
    out.push_back(std::move(u));
  }
  std::vector<EnergyMeter> energy(out.size());
  std::vector<Weighted> power(out.size());
  Clock clock(trace.header);
  for (const auto& s : trace.samples) {
    const double dt = clock.dt(s);
    const auto it = slot.find(s.gpu);
    if (it == slot.end() || s.values.empty()) continue;
    if ((options.from && s.t < *options.from) || (options.to && s.t > *options.to)) continue;
    GpuUsage& u = out[it->second];
    u.covered_s += dt;
    if (!u.first_t) u.first_t = s.t - dt;
    u.last_t = s.t;
    if (s.allocations) {
      u.allocated_basis = AllocatedBasis::Scheduler;
      u.scheduler_s += dt;
    } else if (s.procs && u.allocated_basis != AllocatedBasis::Scheduler) {
      u.allocated_basis = AllocatedBasis::Processes;
    } else if (s.values.has(Metric::MemUsedMib) && u.allocated_basis == AllocatedBasis::Activity) {
      u.allocated_basis = AllocatedBasis::Memory;
    }
    if (const auto h = held(s, options.held_memory_mib)) u.allocated.add(dt, *h ? 1.0 : 0.0);
    const auto pct = [&](Metric m, Weighted& w) {
      if (const auto v = s.get(m)) w.add(dt, std::clamp(*v, 0.0, 100.0) / 100.0);
    };
    pct(Metric::GpuUtil, u.kernel);
    pct(Metric::SmActive, u.sm);
    pct(Metric::TensorActive, u.tensor);
    pct(Metric::DramActive, u.dram);
    if (const auto tensor = s.get(Metric::TensorActive)) {
      const auto peak = options.peak_clock_mhz.find(s.gpu);
      const auto sm_clock = s.get(Metric::SmClockMhz);
      double scale = 1.0;
      if (peak != options.peak_clock_mhz.end() && peak->second > 0 && sm_clock) {
        scale = *sm_clock / peak->second;
        u.clock_corrected = true;
      }
      u.tensor_at_peak_clock.add(dt, std::clamp(*tensor, 0.0, 100.0) / 100.0 * scale);
    }
    energy[it->second].add(s, dt);
    if (const auto p = s.get(Metric::PowerW)) power[it->second].add(dt, *p);
    if (const auto m = s.get(Metric::MemUsedMib)) {
      u.peak_mem_mib = std::max(u.peak_mem_mib.value_or(0), *m);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].energy_j = energy[i].total();
    if (out[i].energy_j) out[i].energy_basis = energy[i].basis();
    out[i].mean_power_w = power[i].ratio();
  }
  return out;
}

GpuUsage total_usage(const std::vector<GpuUsage>& gpus) {
  GpuUsage t;
  t.gpu = -1;
  t.allocated_basis = AllocatedBasis::Scheduler;
  bool any_energy = false;
  double energy = 0;
  for (const auto& g : gpus) {
    t.covered_s += g.covered_s;
    t.scheduler_s += g.scheduler_s;
    if (g.first_t) t.first_t = std::min(t.first_t.value_or(*g.first_t), *g.first_t);
    if (g.last_t) t.last_t = std::max(t.last_t.value_or(*g.last_t), *g.last_t);
    t.allocated += g.allocated;
    t.kernel += g.kernel;
    t.sm += g.sm;
    t.tensor += g.tensor;
    t.dram += g.dram;
    t.tensor_at_peak_clock += g.tensor_at_peak_clock;
    t.clock_corrected = t.clock_corrected || g.clock_corrected;
    // The weakest basis of any GPU is the basis of the whole.
    if (g.covered_s > 0) t.allocated_basis = std::max(t.allocated_basis, g.allocated_basis);
    if (g.energy_j) {
      any_energy = true;
      energy += *g.energy_j;
      if (t.energy_basis.empty() || g.energy_basis == "power integral") {
        t.energy_basis = g.energy_basis;
      }
    }
    if (g.mean_power_w) t.mean_power_w = t.mean_power_w.value_or(0) + *g.mean_power_w;
    if (g.peak_mem_mib) t.peak_mem_mib = std::max(t.peak_mem_mib.value_or(0), *g.peak_mem_mib);
  }
  if (any_energy) t.energy_j = energy;
  return t;
}

const FunnelStep* Funnel::step(const std::string& id) const {
  for (const auto& s : steps) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

Funnel build_funnel(const GpuUsage& total, double paid_gpu_hours) {
  Funnel f;
  f.paid_gpu_hours = paid_gpu_hours;
  // Where the scheduler's word was missing part of the time (the agent fell back
  // to processes: no prolog entry yet, a kubelet that did not answer), say how much.
  const double scheduler_share = total.covered_s > 0 ? total.scheduler_s / total.covered_s : 0;
  const std::string scheduler_basis =
      scheduler_share >= 0.995
          ? "the scheduler's allocation (Slurm's prolog, the kubelet's pod-resources API), and "
            "processes outside any job"
          : fmt::format(
                "the scheduler's allocation (Slurm's prolog, the kubelet's pod-resources API) "
                "for {:.0f} % of the time, processes for the rest (it was not read then)",
                scheduler_share * 100);
  const std::string alloc_basis =
      total.allocated_basis == AllocatedBasis::Scheduler ? scheduler_basis
      : total.allocated_basis == AllocatedBasis::Processes
          ? "processes on the GPU (memory in use where they were not sampled)"
      : total.allocated_basis == AllocatedBasis::Memory
          ? "device memory in use (no process lists were recorded)"
          : "kernel activity (neither processes nor memory were recorded)";
  struct Def {
    const char* id;
    const char* label;
    std::string meaning;
    const Weighted* w;
    std::string basis;
  };
  const Def defs[] = {
      {"allocated", "allocated",
       total.allocated_basis == AllocatedBasis::Scheduler ? "a job holds the GPU"
                                                          : "a process holds the GPU",
       &total.allocated, alloc_basis},
      {"kernel_active", "kernel-active", "a kernel is running (gpu_util, nvidia-smi's number)",
       &total.kernel, "gpu_util"},
      {"sm_active", "SM-active", "the SMs are doing work (GPM SM activity)", &total.sm,
       "sm_active"},
      {"tensor_active", "tensor-active", "the tensor cores are doing work", &total.tensor,
       "tensor_active"},
  };
  std::optional<double> previous = 1.0;
  for (const auto& d : defs) {
    FunnelStep s;
    s.id = d.id;
    s.label = d.label;
    s.meaning = d.meaning;
    s.basis = d.basis;
    s.share = d.w->ratio();
    if (s.share) {
      s.gpu_hours = *s.share * paid_gpu_hours;
      if (previous && *previous > 0) s.of_previous = std::min(1.0, *s.share / *previous);
    }
    previous = s.share;
    f.steps.push_back(std::move(s));
  }
  return f;
}

}  // namespace gpulens::verdict

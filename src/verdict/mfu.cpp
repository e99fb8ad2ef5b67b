// SPDX-License-Identifier: Apache-2.0
#include "verdict/mfu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpulens::verdict {
namespace {

std::optional<double> number(const nlohmann::json& fields, const char* key) {
  const auto it = fields.find(key);
  if (it == fields.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ModelWork> work_from_steps(const std::vector<Mark>& marks,
                                         std::optional<double> default_flops,
                                         std::optional<double> from, std::optional<double> to) {
  struct Step {
    double t;
    double flops;
    long steps;
  };
  std::vector<Step> steps;
  for (const auto& m : marks) {
    if (m.name != kStepMark) continue;
    if ((from && m.t < *from) || (to && m.t > *to)) continue;
    auto flops = number(m.fields, "flops");
    if (!flops) flops = default_flops;
    if (!flops || *flops < 0) continue;
    const long n = std::max<long>(1, std::lround(number(m.fields, "steps").value_or(1)));
    steps.push_back({m.t, *flops, n});
  }
  if (steps.size() < 2) return std::nullopt;
  std::stable_sort(steps.begin(), steps.end(),
                   [](const Step& a, const Step& b) { return a.t < b.t; });
  ModelWork w;
  w.source = "step marks";
  w.start = steps.front().t;
  w.end = steps.back().t;
  w.seconds = w.end - w.start;
  w.total_flops = steps.front().flops;
  for (std::size_t i = 1; i < steps.size(); ++i) {
    w.flops += steps[i].flops;
    w.steps += steps[i].steps;
    w.total_flops += steps[i].flops;
  }
  if (w.seconds <= 0) return std::nullopt;
  return w;
}

std::optional<ModelWork> work_from_phase_fields(const nlohmann::json& fields, double start,
                                                double end) {
  const auto per_step = number(fields, "flops_per_step");
  const auto steps = number(fields, "steps");
  if (!per_step || !steps || *per_step < 0 || *steps <= 0) return std::nullopt;
  ModelWork w;
  w.source = "phase marks";
  w.start = start;
  w.end = end;
  w.seconds = number(fields, "seconds").value_or(end - start);
  w.steps = std::lround(*steps);
  w.flops = *per_step * *steps;
  w.total_flops = w.flops;
  if (w.seconds <= 0) return std::nullopt;
  return w;
}

PeakBasis resolve_peak(const std::vector<DeviceInfo>& devices, const GpuModelTable* table,
                       const std::string& dtype, std::optional<double> override_tflops) {
  PeakBasis p;
  p.dtype = dtype;
  p.gpus = static_cast<int>(devices.size());
  if (override_tflops) {
    p.total_tflops = *override_tflops * p.gpus;
    p.per_gpu_tflops = override_tflops;
    p.source = "--peak-tflops";
  }
  std::vector<const GpuModel*> found;
  for (const auto& d : devices) {
    const GpuModel* m = table != nullptr ? table->find(d.name) : nullptr;
    found.push_back(m);
    if (override_tflops) continue;
    if (m == nullptr) {
      p.problems.push_back(fmt::format("GPU {} ({}) is not in the peak table{}", d.index,
                                       d.name.empty() ? "unnamed" : d.name,
                                       table == nullptr ? " (no peak table loaded)" : ""));
      continue;
    }
    const auto peak = m->peak_tflops(dtype);
    if (!peak) {
      p.problems.push_back(fmt::format("{} has no dense {} figure", m->model, dtype));
      continue;
    }
    p.total_tflops += *peak;
  }
  // One model for the whole job is the common case; say it by name.
  const bool same = !found.empty() && found.front() != nullptr &&
                    std::all_of(found.begin(), found.end(),
                                [&](const GpuModel* m) { return m == found.front(); });
  if (same) {
    p.model = found.front()->model;
    p.peak_clock_mhz = found.front()->peak_clock_mhz;
    if (!override_tflops) {
      p.per_gpu_tflops = found.front()->peak_tflops(dtype);
      p.source = table->origin() + ": " + found.front()->source;
    }
  } else if (!found.empty()) {
    p.model = "mixed";
    if (!override_tflops && table != nullptr) p.source = table->origin() + ", per GPU";
  }
  return p;
}

std::optional<double> mfu_of(const ModelWork& work, const PeakBasis& peak) {
  if (!peak.known() || work.seconds <= 0) return std::nullopt;
  return work.flops_per_s() / (peak.total_tflops * 1e12);
}

}  // namespace gpulens::verdict

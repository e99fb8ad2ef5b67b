// SPDX-License-Identifier: Apache-2.0
#pragma once
// Model FLOPs utilization: the model FLOP/s a job reports (step marks, or the
// phase marks of the reference recordings) over the dense peak of its GPUs for
// one data type; and, always, a hardware estimate from tensor-pipe activity.
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "verdict/gpu_models.hpp"

namespace gpulens::verdict {

// Model FLOPs done over a span of time.
struct ModelWork {
  double flops = 0;    // FLOPs the rate is computed from
  double seconds = 0;  // the span they took
  double start = 0;
  double end = 0;
  long steps = 0;          // steps in the span
  double total_flops = 0;  // every FLOP reported, the first step's included
  std::string source;      // "step marks", "phase marks"
  double flops_per_s() const { return seconds > 0 ? flops / seconds : 0; }
};

// Step marks ("step", with "flops", or `default_flops` for marks without) whose t
// lies in [from, to]. A mark says when a step ended, not when it began, so the
// rate is the FLOPs of steps 2..n over the time from step 1's end to step n's.
// nullopt with fewer than two steps.
std::optional<ModelWork> work_from_steps(const std::vector<Mark>& marks,
                                         std::optional<double> default_flops,
                                         std::optional<double> from = std::nullopt,
                                         std::optional<double> to = std::nullopt);

// A phase whose marks carry "flops_per_step" and "steps" ("seconds" optional,
// else end - start), as the training reference recording has them.
std::optional<ModelWork> work_from_phase_fields(const nlohmann::json& fields, double start,
                                                double end);

inline constexpr const char* kStepMark = "step";

// The MFU denominator for a set of GPUs.
struct PeakBasis {
  std::string dtype = "bf16";
  double total_tflops = 0;               // summed over the GPUs that have a peak
  int gpus = 0;                          // GPUs counted
  std::optional<double> per_gpu_tflops;  // when every GPU has the same peak
  std::string model;                     // "H100 SXM"; "mixed" or "" when unknown
  std::optional<double> peak_clock_mhz;  // when every GPU has the same
  std::string source;                    // where the figure came from
  std::vector<std::string> problems;     // GPUs without a figure, and why
  bool known() const { return total_tflops > 0 && problems.empty(); }
};

// `override_tflops` (--peak-tflops, per GPU) wins over the table.
PeakBasis resolve_peak(const std::vector<DeviceInfo>& devices, const GpuModelTable* table,
                       const std::string& dtype, std::optional<double> override_tflops);

// MFU of `work` against `peak` (0..1); nullopt when the peak is unknown.
std::optional<double> mfu_of(const ModelWork& work, const PeakBasis& peak);

}  // namespace gpulens::verdict

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The job's steady state: the span between its GPUs' first and last work. A
// job spends its first seconds importing, loading data and compiling with the
// GPU held but idle, and its last ones writing results: that start-up and
// tear-down is reported apart, not as waste of the job, and the verdict judges
// what the job does once it runs. Measured per GPU on the diagnosis timeline,
// so that the state shares, the edges and the cost split use the same seconds.
#include <optional>
#include <vector>

#include "diagnosis/timeline.hpp"

namespace gpulens::verdict {

// A state in which the GPU does work (not idle, not unknown).
bool is_work_state(diagnosis::GpuState state);

// Work that starts the steady state lasts at least this long: a second of
// kernels while a job loads (a CUDA context's first kernels, the previous job's
// last ones in the first window) is start-up, not the job's work.
inline constexpr double kSustainedWorkS = 3.0;

struct GpuSpan {
  int gpu = 0;
  double start = 0;  // the GPU's first timeline second
  double end = 0;
  std::optional<double> work_start;  // its first run in a work state
  std::optional<double> work_end;    // the end of its last one
  double startup_s = 0;              // idle before work_start
  double teardown_s = 0;             // idle after work_end
};

struct SteadyState {
  std::vector<GpuSpan> gpus;
  bool edges_apart = true;
  double total_s = 0;             // GPU-seconds on the timeline
  double startup_s = 0;           // GPU-seconds of start-up, all GPUs
  double teardown_s = 0;          // ... of tear-down
  diagnosis::StateShares all;     // GPU-seconds per state, the whole timeline
  diagnosis::StateShares steady;  // ... between each GPU's first and last work
  std::optional<double> start;    // the first work of any GPU
  std::optional<double> end;      // the last work of any GPU

  bool any_work() const { return start.has_value(); }
  double steady_s() const { return steady.total(); }
  double edges_s() const { return startup_s + teardown_s; }
  // The interval lies in the GPU's start-up or tear-down.
  bool in_edges(int gpu, double from, double to) const;
  const GpuSpan* span(int gpu) const;
};

// `edges_apart` false (a range of the agent's history, which has no start-up):
// every second is the steady state's.
SteadyState find_steady_state(const diagnosis::DiagnosisReport& report, bool edges_apart = true);

}  // namespace gpulens::verdict

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Does the kernel view stand for the job? A job traced in windows (the default of
// `gpulens run --kernels`) is seen by CUPTI only inside them, while the device
// counters of the same recording cover all of it: per tick, the share of time a
// kernel was running (gpu_util). This compares the two, over the job and over
// each of its phases (docs/kernels.md, "Windows and counters"): how much of the
// counters' kernel-active time the windows hold (coverage), and the windows'
// busy share against the counters' kernel-active share. The headline says so
// when coverage is under half or the shares differ by more than 10 points.
//
// Pure: ticks, windows, busy intervals and phases in, figures out; the analysis
// (analysis.cpp) gathers the inputs from the recording.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "kernels/view/trace_windows.hpp"
#include "kernels/view/view.hpp"

namespace gpulens::kernels {

// One counter tick of one GPU: kernels ran `active` (0..1) of [from, to].
struct CounterTick {
  double from = 0, to = 0;
  double active = 0;
};

// A named span of the job (a phase), on the same clock as the ticks.
struct NamedSpan {
  std::string name;
  double from = 0, to = 0;
};

struct ReconcileInputs {
  const std::vector<CounterTick>* ticks = nullptr;  // sorted by `from`, disjoint
  const Spans* windows = nullptr;  // the windows as the GPU ran them (sorted, disjoint)
  const Spans* busy = nullptr;     // the device's busy intervals (merged, sorted)
  const HiddenIdles* hidden = nullptr;
  const std::vector<NamedSpan>* phases = nullptr;  // may be null
};

// nullopt when the ticks cannot say: none, or no tick overlapping the job.
std::optional<Reconciliation> reconcile(const ReconcileInputs& in);

// The kernel-active ticks of `gpu` in a recording (Unix seconds, moved by
// `-origin_s` to the analysis clock): each sample's interval runs from the
// previous sample of the GPU (the first one: `interval_s` before it, or it is
// skipped when that is unknown). Samples without gpu_util are left out.
std::vector<CounterTick> counter_ticks(const std::vector<gpulens::Sample>& samples, int gpu,
                                       std::optional<double> interval_s, double origin_s);

// ", which cover 12 % of the job's kernel-active time; over the whole job the
// counters saw kernels running 51 % of the time, so ..." for a flagged job, else "".
// `steps`: the headline's figure is over the marked steps, so the windows' own
// busy share is given too.
std::string reconcile_clause(const SpanCheck& job, bool steps);

// "GPU 0: the trace windows (12 s) hold 12 % of the job's kernel-active time; ..."
// for the report's lines, whether flagged or not.
std::string job_sentence(const Reconciliation& r);

// "phase `eval` (10 s): busy 98 % of its trace windows, ..." likewise.
std::string phase_sentence(const SpanCheck& phase);

// Whether any device's windows do not stand for its job. NVTX ranges are
// recorded only while a window is open, so the counters cannot say which range
// ran outside them: the reports then say the table is the windows' alone
// (kNvtxWindowsOnly).
bool any_flagged(const std::vector<Reconciliation>& all);
inline constexpr const char* kNvtxWindowsOnly =
    "ranges are measured inside the trace windows only, which do not stand for the whole job "
    "(above)";

// Phases a report lists per device; the rest are counted.
inline constexpr std::size_t kReportedPhases = 20;

}  // namespace gpulens::kernels

// SPDX-License-Identifier: Apache-2.0
#pragma once
// When `gpulens run --kernels` traces the job's GPU activity. Tracing every kernel
// costs the job a few microseconds per launch (CUPTI's, docs/kernels.md "What it
// costs"), a quarter of a batch-1 inference step; so by default the library traces
// in windows of `window_s` seconds, one every `every_s` seconds once the job is
// under way. `every_s` == 0 traces the whole job, as a profiler does.
//
// Two layouts (docs/kernels.md, "Trace windows"):
// - spread (`ramp_s` > 0, the default of `gpulens run`): the first window opens
//   at the job's first CUDA start (`origin_unix_ns`: the first process to start
//   CUDA writes it where the others read it), and each later window lies in a
//   slot of its own: slots of `ramp_s` seconds growing by half each time up to
//   `every_s`, each window placed in its slot by the golden-ratio sequence. A
//   short job is so traced in proportion, windows spread over it, and a job that
//   alternates phases in step with the period is not always seen in the same one.
// - fixed (`ramp_s` == 0, the original form): one window every `every_s` from
//   `first_s` after the job's epoch (a measurement knob: bench/kernels).
// Either way the windows are laid on the job's clock, not each process's, so
// every process of the job traces at the same moments and a GPU two processes
// share is seen whole.
//
// No CUPTI here: the injection library's thread asks it when to switch tracing on
// and off; tested without a GPU.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpulens::inject {

struct TraceSchedule {
  std::int64_t epoch_unix_ns = 0;
  double first_s = 0;
  double window_s = 0;
  double every_s = 0;  // 0: one window, the whole job
  double ramp_s = 0;   // spread: the first slot's length (> window_s); 0: fixed
  // Spread: the job's first CUDA start (unix ns; 0: not known, the epoch). The
  // environment does not carry it: each process takes it from the job's
  // records directory (kOriginFile).
  std::int64_t origin_unix_ns = 0;
  bool whole_job() const { return every_s <= 0; }
  bool spread() const { return ramp_s > 0; }
};

// Slots grow by this factor from `ramp_s` to `every_s`.
inline constexpr double kSlotGrowth = 1.5;

// The file in GPULENS_KERNELS_DIR that holds the job's first CUDA start (decimal
// unix ns), written once by the first process to start CUDA.
inline constexpr const char* kOriginFile = "schedule-origin";

// The job's first CUDA start, shared by its processes through their records
// directory `dir` (kOriginFile): the first process to ask leaves `now` there and
// gets it back; the others get what it left. `now` when the directory cannot say
// (the process's own start then anchors it).
std::int64_t job_origin_ns(const std::string& dir, std::int64_t now);

// The spread layout `gpulens run` gives a job: the first slot twice the window
// (at most the period).
TraceSchedule spread_schedule(std::int64_t epoch_unix_ns, double window_s, double every_s);

// Inclusive start, exclusive end, unix ns.
struct Window {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// The environment's form, GPULENS_KERNELS_SCHEDULE: "EPOCH_NS:FIRST_S:WINDOW_S:EVERY_S"
// (fixed) or "EPOCH_NS:FIRST_S:WINDOW_S:EVERY_S:RAMP_S" (spread; the first window
// opens at the job's first CUDA start, not before FIRST_S after the epoch).
std::string format_schedule(const TraceSchedule& s);
// nullopt when malformed, when the window is not shorter than the period, or
// (spread) than the first slot.
std::optional<TraceSchedule> parse_schedule(std::string_view text);

// The windows of a process that opted in to the node agent outside `gpulens run`
// (docs/kernels-agent.md): 2 s every 20 s on the wall clock (from :10, :30, :50
// of each minute), so every process on the node, whenever it started, traces at
// the same moments and a GPU two jobs share is seen whole.
TraceSchedule node_schedule();

// The window that holds `now_unix_ns`, else the next one to come.
Window window_at_or_after(const TraceSchedule& s, std::int64_t now_unix_ns);

}  // namespace gpulens::inject

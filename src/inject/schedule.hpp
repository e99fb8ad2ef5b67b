// SPDX-License-Identifier: Apache-2.0
#pragma once
// When `gpulens run --kernels` traces the job's GPU activity. Tracing every kernel
// costs the job a few microseconds per launch (CUPTI's, docs/kernels.md "What it
// costs"), a quarter of a batch-1 inference step; so by default the library traces
// in windows: `window_s` seconds every `every_s` seconds, the first one `first_s`
// after the job started. The windows are laid on the job's clock (`epoch`, the
// moment `gpulens run` started it), not each process's, so every process of the
// job traces at the same moments and a GPU two processes share is seen whole.
// `every_s` == 0 traces the whole job, as a profiler does.
//
// Pure: the injection library's thread asks it when to switch tracing on and off;
// tested without CUPTI.
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
  bool whole_job() const { return every_s <= 0; }
};

// Inclusive start, exclusive end, unix ns.
struct Window {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// The environment's form, GPULENS_KERNELS_SCHEDULE: "EPOCH_NS:FIRST_S:WINDOW_S:EVERY_S".
std::string format_schedule(const TraceSchedule& s);
// nullopt when malformed, or when the window is not shorter than the period.
std::optional<TraceSchedule> parse_schedule(std::string_view text);

// The windows of a process that opted in to the node agent outside `gpulens run`
// (docs/kernels-agent.md): 2 s every 20 s on the wall clock (from :10, :30, :50
// of each minute), so every process on the node, whenever it started, traces at
// the same moments and a GPU two jobs share is seen whole.
TraceSchedule node_schedule();

// The window that holds `now_unix_ns`, else the next one to come.
Window window_at_or_after(const TraceSchedule& s, std::int64_t now_unix_ns);

}  // namespace gpulens::inject

// SPDX-License-Identifier: Apache-2.0
#pragma once
// When the injection library has CUPTI record (docs/kernels.md, "Trace windows").
//
// Whole job (--kernels-every 0): CUPTI is attached at cuInit and records until
// the exit. In windows (the default): nothing of CUPTI is touched until the first
// window opens; then CUPTI is attached (our buffers registered), and each window
// switches the kinds on and off again.
//
// CUPTI stays attached between windows, every kind off, although that still
// costs launch-bound jobs (bench/results/kernels-windows-h100.txt): detaching it
// with cuptiFinalize, as NVIDIA documents, and attaching again at the next window
// killed 5 of 7 PyTorch jobs on the H100 with a segmentation fault
// (bench/results/kernels-detach-crash-h100.txt), and even taken at a job thread's
// outermost CUDA exit it killed 2 of 84 (bench/results/kernels-v4/detach-h100.txt).
// A monitor must not do that, so the library has no detach at all.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inject/schedule.hpp"

namespace gpulens::inject {

struct Injection;

// The windows: when CUPTI records, and which windows it recorded.
struct Windows {
  // Set at cuInit, before the window thread starts; read-only after.
  std::optional<TraceSchedule> schedule;  // nullopt: the whole job
  std::string schedule_error;             // GPULENS_KERNELS_SCHEDULE unreadable: whole job traced
  // Collecting: not stopped, not failed. Read by the job's thread that registers
  // its own CUPTI buffers, without `toggle`.
  std::atomic<bool> active{false};

  // `toggle` orders the window thread's switching against the exit handler and
  // the job's profiler taking over. It is never held by CUPTI's callbacks. The
  // members below are read and written under it.
  std::mutex toggle;
  bool stopping = false;  // no more windows: exit, or the job's profiler took over
  bool tracing = false;   // a window is open
  std::uint64_t window_start_ns = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;  // CUPTI timestamps
  std::size_t windows_written = 0;                               // windows whose chunk is out
  std::uint64_t chunk_start_ns = 0;  // traced whole: where the next chunk starts
};

// Whole job: attaches and records from now on. False when CUPTI refused (the
// status says why).
bool trace_whole_job(Injection& in);

// In windows: opens the window that holds this moment, if one does (the first
// window of a spread schedule opens at the job's first CUDA start); called from
// cuInit, before the window thread starts.
void open_window_if_due(Injection& in);

// In windows: starts the thread that opens and closes them.
void start_window_thread(Injection& in);

// Stops recording for good (exit, or the job's own profiler taking over), with
// everything CUPTI still holds delivered to our buffers.
void stop_tracing(Injection& in);

// At exit, after stop_tracing: what is still unwritten goes out as the last
// chunk (the last window, if the window thread had not written it; else what ran
// after the last chunk, as a chunk outside the windows).
void write_last_chunk(Injection& in);

}  // namespace gpulens::inject

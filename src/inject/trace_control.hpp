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
// (bench/results/kernels-detach-crash-h100.txt). A monitor must not do that.
#include "inject/inject_state.hpp"

namespace gpulens::inject {

// Whole job: attaches and records from now on. False when CUPTI refused (the
// status says why).
bool trace_whole_job(State& s);

// In windows: opens the window that holds this moment, if one does (the first
// window of a spread schedule opens at the job's first CUDA start); called from
// cuInit, before the window thread starts.
void open_window_if_due(State& s);

// In windows: starts the thread that opens and closes them.
void start_window_thread();

// Stops recording for good (exit, or the job's own profiler taking over), with
// everything CUPTI still holds delivered to our buffers.
void stop_tracing(State& s);

}  // namespace gpulens::inject

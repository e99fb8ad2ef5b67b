#pragma once
// When the injection library has CUPTI record (docs/kernels.md, "Trace windows").
//
// Whole job (--kernels-every 0): CUPTI is attached at cuInit and records until
// the exit. In windows (the default): nothing of CUPTI is touched until a window
// opens; then CUPTI is attached (our buffers registered, the kinds enabled), and
// when it closes the kinds go off, the records are flushed and CUPTI is detached
// again with cuptiFinalize. Detaching matters: on the H100 a CUPTI left attached
// with every kind off still cost a batch-1 loop about 30 % of its step time
// (bench/results/kernels-windows-h100.txt). NVIDIA asks that cuptiFinalize be
// called at the exit of a CUDA API call, so the library subscribes to the
// driver and runtime API callbacks for that one moment; the job's next CUDA call
// finalises CUPTI on its way out.
#include "inject/inject_state.hpp"

namespace gpulens::inject {

// Whole job: attaches and records from now on. False when CUPTI refused (the
// status says why).
bool trace_whole_job(State& s);

// In windows: starts the thread that opens and closes them.
void start_window_thread();

// Stops recording for good (exit, or the job's own profiler taking over), with
// everything CUPTI still holds delivered to our buffers.
void stop_tracing(State& s);

}  // namespace gpulens::inject

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Detaching CUPTI between trace windows (docs/kernels.md, "What it costs").
//
// Measured on an H100 (bench/results/kernels-v4/cupti-states-h100.txt): once any
// per-launch activity kind has been enabled, CUPTI keeps its per-launch hooks in
// the driver after the kind is disabled again, and a launch costs the job about
// as much between windows as inside one (+1.2 to 1.7 us on a 4.3 us launch).
// Disabling kinds, flushing, even never enabling the kernel kind again leave it;
// only cuptiFinalize takes it away. NVIDIA asks for cuptiFinalize to be called at
// the exit of a CUDA API call; called from our own thread while the job's thread
// was inside CUDA it killed PyTorch jobs (bench/results/kernels-detach-crash-h100.txt).
//
// So a detach here is taken only on a job thread, at the exit of its outermost
// CUDA call, when no other call that began since the detach was asked for is
// still inside CUDA (detach_gate.hpp); until then CUPTI stays attached with every
// kind off. It removes the cost between windows (the same H100 probe: -3.6 % +-9.5
// against +23 % +-23 attached), but it is NOT safe: 2 of 84 PyTorch jobs died
// (SIGSEGV, SIGABRT), one in `module.cuda()` on a single thread, which points at
// the re-attach at the next window (our window thread initialising CUPTI again
// while a job thread is inside CUDA) rather than at the finalise
// (bench/results/kernels-v4/detach-h100.txt). So it is off unless
// $GPULENS_KERNELS_DETACH=1, a measurement knob for that harness, not a user
// option; the record says how often it detached, the longest finalise, or why not.
//
// While a detach is armed (from a window's end to the job's next CUDA call) the
// library holds CUPTI's one Callback API subscription; a profiler the job starts
// in that moment finds it taken. Traced whole, nothing detaches.
#include "inject/inject_state.hpp"

namespace gpulens::inject {

// $GPULENS_KERNELS_DETACH is "1".
bool detach_wanted();

// After a window's records are flushed and written: asks CUPTI to be finalised at
// the job's next outermost CUDA API exit. Called with `toggle` held.
void request_detach(State& s);

// Before CUPTI is touched again (a window opens, the job exits): a detach asked
// for and not yet taken is taken back, so CUPTI is either attached and quiet or
// finalised. Called with `toggle` held.
void settle_detach(State& s);

}  // namespace gpulens::inject

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The clocks every layer reads, in seconds as doubles: one definition each, so that
// "now" means the same thing in a trace, the store, the agent and the CLI.
namespace gpulens {

// Seconds since the Unix epoch (CLOCK_REALTIME): what traces, marks and the store keep.
double unix_now();
// Seconds on the monotonic clock (CLOCK_MONOTONIC): for intervals, never stored.
double monotonic_now();
// CPU time of the calling thread (user + system): what a sample cost.
double thread_cpu_seconds();
// CPU time of the whole process (user + system, all threads).
double process_cpu_seconds();

}  // namespace gpulens

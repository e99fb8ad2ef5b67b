// SPDX-License-Identifier: Apache-2.0
#pragma once
// Ctrl-C and SIGTERM end live commands cleanly (the last tick is flushed). Signals
// are blocked in every thread and taken by one sigwait thread, so the stop action
// may lock mutexes, which a plain signal handler may not.
#include <functional>

namespace gpulens::cli {

// Call first thing in main(), before any thread starts.
void block_stop_signals();
// Sets what the first SIGINT/SIGTERM does; a second one exits at once (code 130).
void on_stop_signal(std::function<void()> action);
// For commands that compute and print (report, diagnose of a recording): the first
// SIGINT/SIGTERM ends the process at once, with 128 + the signal (130, 143), at
// any point of the work: there is nothing to flush, and a long analysis must not
// leave Ctrl-C and `timeout` unanswered (the signals are blocked in every thread).
void exit_on_stop_signal();
// For child processes: undo block_stop_signals() (call between fork and exec).
void unblock_stop_signals_in_child();

}  // namespace gpulens::cli

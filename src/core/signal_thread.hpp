// SPDX-License-Identifier: Apache-2.0
#pragma once
// Signals taken by a thread, not a handler. The signals are blocked in every
// thread (block_signals before any thread starts, so all inherit the mask) and
// one thread waits for them with sigwaitinfo: what a signal does can then lock
// mutexes, log and wait, which an async-signal handler may not. gpulens has three
// such threads (the commands' stop, `gpulens run`'s relay to the job, the agent's
// reload); each keeps its own policy, this keeps the mechanism.
#include <signal.h>

#include <functional>
#include <initializer_list>

namespace gpulens {

sigset_t signal_set(std::initializer_list<int> signals);

// Blocks `signals` in the calling thread (and the threads it starts later).
void block_signals(std::initializer_list<int> signals);
// Undoes block_signals, for a child between fork and exec.
void unblock_signals(std::initializer_list<int> signals);

// Starts a detached thread named `name` (at most 15 characters) that calls
// `on_signal` for each of `signals` as it comes, for as long as the process lives.
// The signals must be blocked in every thread already.
void start_signal_thread(std::initializer_list<int> signals, const char* name,
                         std::function<void(const siginfo_t&)> on_signal);

}  // namespace gpulens

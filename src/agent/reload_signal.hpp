// SPDX-License-Identifier: Apache-2.0
#pragma once
// SIGHUP reloads the agent's configuration. Like SIGINT/SIGTERM (cli/signals),
// it is blocked in every thread and taken by one sigwait thread, so the reload
// may lock mutexes and read files, which a signal handler may not.
#include <functional>

namespace gpulens::agent {

// Call before any thread starts, so that every thread inherits the mask.
void block_reload_signal();
// Runs `action` on the waiting thread for each SIGHUP.
void on_reload_signal(std::function<void()> action);

}  // namespace gpulens::agent

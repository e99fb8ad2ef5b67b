// SPDX-License-Identifier: Apache-2.0
#include "agent/reload_signal.hpp"

#include <signal.h>

#include <mutex>

#include "core/signal_thread.hpp"

namespace gpulens::agent {
namespace {

std::mutex g_reload_mutex;
std::function<void()> g_action;
std::once_flag g_started;

void on_signal(const siginfo_t&) {
  std::function<void()> action;
  {
    std::lock_guard lock(g_reload_mutex);
    action = g_action;
  }
  if (action) action();
}

}  // namespace

void block_reload_signal() {
  block_signals({SIGHUP});
}

void on_reload_signal(std::function<void()> action) {
  {
    std::lock_guard lock(g_reload_mutex);
    g_action = std::move(action);
  }
  std::call_once(g_started, [] { start_signal_thread({SIGHUP}, "gpulens-reload", on_signal); });
}

}  // namespace gpulens::agent

// SPDX-License-Identifier: Apache-2.0
#include "cli/signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <mutex>

#include "core/signal_thread.hpp"

namespace gpulens::cli {
namespace {

std::mutex g_mutex;
std::function<void()> g_action;
std::once_flag g_thread_started;
int g_count = 0;  // the signal thread's alone

void on_signal(const siginfo_t& info) {
  if (++g_count > 1) _exit(130);
  std::function<void()> action;
  {
    std::lock_guard lock(g_mutex);
    action = g_action;
  }
  if (action) {
    action();
  } else {
    _exit(128 + info.si_signo);
  }
}

}  // namespace

void block_stop_signals() {
  block_signals({SIGINT, SIGTERM});
}

void on_stop_signal(std::function<void()> action) {
  {
    std::lock_guard lock(g_mutex);
    g_action = std::move(action);
  }
  std::call_once(g_thread_started, [] {
    start_signal_thread({SIGINT, SIGTERM}, "gpulens-signal", on_signal);
  });
}

void exit_on_stop_signal() {
  on_stop_signal({});  // no action: on_signal exits with 128 + the signal
}

void unblock_stop_signals_in_child() {
  unblock_signals({SIGINT, SIGTERM});
}

}  // namespace gpulens::cli

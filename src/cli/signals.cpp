// SPDX-License-Identifier: Apache-2.0
#include "cli/signals.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <mutex>
#include <thread>

namespace gpulens::cli {
namespace {

std::mutex g_mutex;
std::function<void()> g_action;
std::once_flag g_thread_started;

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

void wait_loop() {
  const sigset_t set = stop_set();
  int received = 0;
  int count = 0;
  while (sigwait(&set, &received) == 0) {
    if (++count > 1) _exit(130);
    std::function<void()> action;
    {
      std::lock_guard lock(g_mutex);
      action = g_action;
    }
    if (action) {
      action();
    } else {
      _exit(128 + received);
    }
  }
}

}  // namespace

void block_stop_signals() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void on_stop_signal(std::function<void()> action) {
  {
    std::lock_guard lock(g_mutex);
    g_action = std::move(action);
  }
  std::call_once(g_thread_started, [] {
    std::thread([] {
      pthread_setname_np(pthread_self(), "gpulens-signal");
      wait_loop();
    }).detach();
  });
}

void exit_on_stop_signal() {
  on_stop_signal({});  // no action: wait_loop exits with 128 + the signal
}

void unblock_stop_signals_in_child() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace gpulens::cli

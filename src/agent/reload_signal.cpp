// SPDX-License-Identifier: Apache-2.0
#include "agent/reload_signal.hpp"

#include <pthread.h>
#include <signal.h>

#include <mutex>
#include <thread>

namespace gpulens::agent {
namespace {

std::mutex g_mutex;
std::function<void()> g_action;
std::once_flag g_started;

sigset_t reload_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  return set;
}

void wait_loop() {
  const sigset_t set = reload_set();
  int received = 0;
  while (sigwait(&set, &received) == 0) {
    std::function<void()> action;
    {
      std::lock_guard lock(g_mutex);
      action = g_action;
    }
    if (action) action();
  }
}

}  // namespace

void block_reload_signal() {
  const sigset_t set = reload_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void on_reload_signal(std::function<void()> action) {
  {
    std::lock_guard lock(g_mutex);
    g_action = std::move(action);
  }
  std::call_once(g_started, [] { std::thread(wait_loop).detach(); });
}

}  // namespace gpulens::agent

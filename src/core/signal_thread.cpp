// SPDX-License-Identifier: Apache-2.0
#include "core/signal_thread.hpp"

#include <pthread.h>

#include <cerrno>
#include <thread>

namespace gpulens {

sigset_t signal_set(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (const int s : signals) sigaddset(&set, s);
  return set;
}

void block_signals(std::initializer_list<int> signals) {
  const sigset_t set = signal_set(signals);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void unblock_signals(std::initializer_list<int> signals) {
  const sigset_t set = signal_set(signals);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void start_signal_thread(std::initializer_list<int> signals, const char* name,
                         std::function<void(const siginfo_t&)> on_signal) {
  std::thread([set = signal_set(signals), name, on_signal = std::move(on_signal)] {
    pthread_setname_np(pthread_self(), name);
    while (true) {
      siginfo_t info{};
      if (sigwaitinfo(&set, &info) < 0) {
        if (errno == EINTR) continue;  // another signal, not in the set, ran a handler
        return;
      }
      on_signal(info);
    }
  }).detach();
}

}  // namespace gpulens

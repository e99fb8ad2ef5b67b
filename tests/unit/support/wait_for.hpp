// SPDX-License-Identifier: Apache-2.0
#pragma once
// Polls `pred` every 10 ms until it holds or `seconds` pass; true when it held.
// For tests of background threads (the history writer), whose work has no event
// to wait on; the deadline is generous so that a loaded machine still passes.
#include <chrono>
#include <thread>

namespace gpulens::testing {

template <typename Pred>
bool wait_for(Pred pred, double seconds = 5) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace gpulens::testing

// SPDX-License-Identifier: Apache-2.0
#include "inject/detach_gate.hpp"

#include <thread>

namespace gpulens::inject {

void DetachGate::arm() {
  std::lock_guard lock(mutex_);
  armed_ = true;
  finalizing_.store(false, std::memory_order_release);
  inflight_ = 0;
  ++epoch_;
}

bool DetachGate::disarm() {
  std::lock_guard lock(mutex_);
  const bool was = armed_;
  armed_ = false;
  return was;
}

bool DetachGate::armed() const {
  std::lock_guard lock(mutex_);
  return armed_;
}

void DetachGate::sync(ThreadCalls& t) const {
  if (t.epoch != epoch_) {
    t.epoch = epoch_;
    t.depth = 0;
  }
}

// Waits out another thread's bookkeeping (a few instructions), but never a
// finalise: cuptiFinalize may wait for the callbacks under way, this one among them.
std::unique_lock<std::mutex> DetachGate::try_hold() {
  for (int tries = 0; tries < 1000; ++tries) {
    if (finalizing_.load(std::memory_order_acquire)) break;
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) return lock;
    std::this_thread::yield();
  }
  return {};
}

void DetachGate::enter(ThreadCalls& t) {
  auto lock = try_hold();
  if (!lock.owns_lock() || !armed_) return;
  sync(t);
  ++t.depth;
  ++inflight_;
}

bool DetachGate::leave(ThreadCalls& t, std::unique_lock<std::mutex>& lock) {
  auto held = try_hold();
  if (!held.owns_lock() || !armed_) return false;
  sync(t);
  if (t.depth == 0) return false;  // entered before the arming
  --t.depth;
  --inflight_;
  if (t.depth > 0 || inflight_ > 0) return false;
  armed_ = false;
  finalizing_.store(true, std::memory_order_release);
  lock = std::move(held);
  return true;
}

}  // namespace gpulens::inject

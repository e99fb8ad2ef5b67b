// SPDX-License-Identifier: Apache-2.0
#pragma once
// When a job thread may finalise CUPTI (detach.hpp): at the exit of its outermost
// CUDA call, once no other call that began since the detach was armed is still
// inside CUDA. Pure bookkeeping, tested without CUPTI; detach.cpp calls it from
// CUPTI's API callbacks on the job's threads.
//
// A call that began before the arming is not counted (its entry was not seen);
// its exit is ignored. Each thread keeps a `ThreadCalls` (thread_local in
// detach.cpp), tied to one arming by its epoch, so a call left open when a
// detach was taken back does not count against the next one.
#include <atomic>
#include <cstdint>
#include <mutex>

namespace gpulens::inject {

struct ThreadCalls {
  int depth = 0;  // calls of this thread entered since the arming, not yet left
  std::uint64_t epoch = 0;
};

class DetachGate {
 public:
  // Arms for one detach: counts start from zero.
  void arm();
  // Takes back an armed detach not yet taken; false when none was armed.
  bool disarm();
  bool armed() const;

  // A job thread enters a CUDA call. Never waits for a finalise: a call that
  // begins during one is not counted.
  void enter(ThreadCalls& t);
  // A job thread leaves a CUDA call. True exactly once per arming: the caller
  // must finalise now, and holds `lock` (which it keeps until it has) so that
  // no other thread counts a call meanwhile. Never blocks.
  bool leave(ThreadCalls& t, std::unique_lock<std::mutex>& lock);

 private:
  void sync(ThreadCalls& t) const;
  std::unique_lock<std::mutex> try_hold();
  mutable std::mutex mutex_;
  std::atomic<bool> finalizing_{false};  // a leave() said "finalise now"
  bool armed_ = false;
  int inflight_ = 0;  // counted calls of every thread, not yet left
  std::uint64_t epoch_ = 0;
};

}  // namespace gpulens::inject

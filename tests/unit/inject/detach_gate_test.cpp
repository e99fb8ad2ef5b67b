// SPDX-License-Identifier: Apache-2.0
#include "inject/detach_gate.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace gpulens::inject {
namespace {

bool leave(DetachGate& g, ThreadCalls& t) {
  std::unique_lock<std::mutex> lock;
  const bool now = g.leave(t, lock);
  EXPECT_EQ(now, lock.owns_lock());  // the finaliser holds the gate while it finalises
  return now;
}

TEST(DetachGate, NothingHappensUnarmed) {
  DetachGate g;
  ThreadCalls t;
  g.enter(t);
  EXPECT_FALSE(leave(g, t));
  EXPECT_FALSE(g.disarm());
}

TEST(DetachGate, FinalisesAtTheOutermostExitOnly) {
  DetachGate g;
  ThreadCalls t;
  g.arm();
  g.enter(t);  // cudaLaunchKernel ...
  g.enter(t);  // ... and the driver call inside it
  EXPECT_FALSE(leave(g, t));
  EXPECT_TRUE(leave(g, t));
  EXPECT_FALSE(g.armed());
  g.enter(t);
  EXPECT_FALSE(leave(g, t));  // once per arming
}

TEST(DetachGate, ACallThatBeganBeforeTheArmingIsNotOursToClose) {
  DetachGate g;
  ThreadCalls t;
  g.arm();
  EXPECT_FALSE(leave(g, t));  // its entry was not seen
  EXPECT_TRUE(g.armed());
  g.enter(t);
  EXPECT_TRUE(leave(g, t));
}

TEST(DetachGate, WaitsForEveryOtherThreadsCallToLeave) {
  DetachGate g;
  ThreadCalls main_thread, autograd;
  g.arm();
  g.enter(autograd);  // a long synchronisation on another thread
  g.enter(main_thread);
  EXPECT_FALSE(leave(g, main_thread));
  EXPECT_TRUE(g.armed());
  EXPECT_TRUE(leave(g, autograd));
}

TEST(DetachGate, ATakenBackDetachLeavesNoCountBehind) {
  DetachGate g;
  ThreadCalls t, other;
  g.arm();
  g.enter(other);  // left open when the next window came
  EXPECT_TRUE(g.disarm());
  EXPECT_FALSE(g.disarm());
  g.arm();
  g.enter(t);
  EXPECT_TRUE(leave(g, t));  // the open call of the last arming does not hold this one
}

TEST(DetachGate, ManyThreadsFinaliseExactlyOnce) {
  DetachGate g;
  std::atomic<int> finalised{0};
  std::atomic<bool> go{false};
  g.arm();
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      ThreadCalls t;
      while (!go.load()) std::this_thread::yield();
      for (int n = 0; n < 1000; ++n) {
        g.enter(t);
        std::unique_lock<std::mutex> lock;
        if (g.leave(t, lock)) ++finalised;
      }
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(finalised.load(), 1);
  EXPECT_FALSE(g.armed());
}

}  // namespace
}  // namespace gpulens::inject

// SPDX-License-Identifier: Apache-2.0
// The launch counter's tables: each thread counts into its own, the totals sum them,
// a table that is full counts the rest as untold, and a fork's child starts at zero.
// Kernel names come from the driver and are tested against the stand-in driver
// (interpose_test.cpp); here graphs, which need no name, are counted.
#include "launch_count/counts.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "launch_count/launch_table.hpp"

namespace gpulens::launch_count {
namespace {

// Starts each test from zero, as a fork's child does.
void zero_counts() {
  counts_before_fork();
  counts_after_fork_in_child();
}

const void* graph_handle(std::uintptr_t i) {
  return reinterpret_cast<const void*>(0x10000 + 64 * i);
}

TEST(LaunchCounts, EveryThreadsLaunchesAreSummed) {
  zero_counts();
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([t] {
      for (int k = 0; k < 1000; ++k) count_launch(graph_handle(t % 2), true);
    });
  }
  for (auto& th : pool) th.join();
  const Totals t = totals();
  EXPECT_EQ(t.graph_launches, 4000u);
  EXPECT_EQ(t.graphs, 2u) << "one handle on two threads is one graph";
  EXPECT_EQ(t.kernel_launches, 0u);
}

TEST(LaunchCounts, AForksChildStartsFromZero) {
  zero_counts();
  count_launch(graph_handle(3), true);
  EXPECT_EQ(totals().graph_launches, 1u);
  counts_before_fork();
  counts_after_fork_in_parent();
  EXPECT_EQ(totals().graph_launches, 1u) << "the parent keeps its counts";
  counts_before_fork();
  counts_after_fork_in_child();
  EXPECT_EQ(totals().graph_launches, 0u);
  EXPECT_EQ(totals().graphs, 0u);
}

TEST(LaunchTable, AKeyIsNamedOnceAndFoundAgain) {
  auto table = std::make_unique<LaunchTable<64>>();
  int named = 0;
  auto namer = [&](const void*, bool) {
    ++named;
    return std::string("k");
  };
  Entry* a = table->find(graph_handle(1), false, namer);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(table->find(graph_handle(1), false, namer), a);
  EXPECT_EQ(named, 1);
  EXPECT_EQ(a->name, "k");
}

TEST(LaunchTable, AFullTableTellsNoMoreKeysApart) {
  auto table = std::make_unique<LaunchTable<64>>();
  auto namer = [](const void*, bool) { return std::string(); };
  for (std::uintptr_t i = 0; i < 64; ++i) {
    ASSERT_NE(table->find(graph_handle(i), true, namer), nullptr);
  }
  EXPECT_EQ(table->find(graph_handle(64), true, namer), nullptr);
  EXPECT_NE(table->find(graph_handle(5), true, namer), nullptr) << "the keys it holds are found";
}

}  // namespace
}  // namespace gpulens::launch_count

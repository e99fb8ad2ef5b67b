// SPDX-License-Identifier: Apache-2.0
#pragma once
// The process's launch counts: each thread counts into a table of its own (no lock,
// no shared cache line on the launch path), and the writer sums the tables by name.
#include <cstdint>
#include <map>
#include <string>

namespace gpulens::launch_count {

// Counts one launch of `key`, a kernel or (graph) a CUDA graph, on this thread. A
// kernel's name is asked of the driver once per thread, at its first launch, while
// the handle is surely alive.
void count_launch(const void* key, bool graph);

struct Totals {
  std::map<std::string, std::uint64_t> kernels;  // by the driver's name
  std::uint64_t kernel_launches = 0;             // all of them, in `kernels` or not
  std::uint64_t untold = 0;                      // launches of kernels past a thread table's room
  std::uint64_t graph_launches = 0;
  std::uint64_t graphs = 0;  // distinct graphs (by handle; a graph on two threads counts twice)
};
// All threads' counts so far, from any thread.
Totals totals();

// In a fork's child: the parent's counts are the parent's, so the child starts from
// zero (it writes a record of its own only if it launches). Also takes and gives back
// the lock around the tables across fork(), so that the child never inherits it held.
void counts_before_fork();
void counts_after_fork_in_parent();
void counts_after_fork_in_child();

}  // namespace gpulens::launch_count

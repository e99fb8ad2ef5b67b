// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel windows jobs sent (docs/kernels-agent.md), one per process, GPU
// and trace window, kept in memory and bounded: a ring of `windows_per_gpu` per
// GPU, the oldest going first. /api/v1/kernels reads it (and /summary visits
// it, for_each); the newest window of
// each process and GPU (latest()) is what per-GPU kernel series are built from.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/record/window.hpp"

namespace gpulens::agent {

// One process's window on one GPU: the record layer's type (kernels/record/window.hpp),
// shared with the history and the API.
using kernels::KernelWindow;

struct KernelQuery {
  double from = 0, to = 0;          // Unix seconds: windows that overlap [from, to]
  std::vector<int> gpus;            // empty: all
  std::vector<std::uint32_t> pids;  // empty: all
  std::size_t limit = 1000;         // the newest this many, in time order
};

struct KernelQueryResult {
  std::vector<KernelWindow> windows;  // oldest first
  bool truncated = false;             // more matched than `limit` (or kMaxKernelAnswerBytes)
};

// The most one query() copies out, in stored bytes (window_bytes): whatever
// `limit` says, an answer stays a few megabytes. A window of 32 kernels with
// 256-byte names holds about 10 KiB, a usual one (10 kernels, 120-byte names)
// about 2.3 KiB.
inline constexpr std::size_t kMaxKernelAnswerBytes = std::size_t{8} << 20;

// The default ring: a day of the node's windows (one every 20 s) for one process
// per GPU. Its size per GPU-day is measured in tests/unit/agent/kernel_store_test.cpp.
inline constexpr std::size_t kKernelWindowsPerGpu = 4320;

// A window's times are Unix nanoseconds; the API and /metrics speak seconds.
inline constexpr double kNsPerS = 1e9;

class KernelStore {
 public:
  explicit KernelStore(std::size_t windows_per_gpu = kKernelWindowsPerGpu);

  // A full ring makes room from the process that holds most of it (its oldest
  // window goes), so one process sending more than others cannot push their
  // windows out: each keeps at least an equal share of its GPU's ring.
  void add(KernelWindow w);
  // The newest `limit` windows that `q` asks for, at most kMaxKernelAnswerBytes
  // of them. Under the lock only pointers are kept while walking (a heap of
  // `limit`), and only the windows answered are copied.
  KernelQueryResult query(const KernelQuery& q) const;
  // Calls `visit` with every window that `q` asks for (its `limit` aside: all of
  // them), GPU by GPU in arrival order, under the store's lock: nothing is copied,
  // so the totals of a day of windows (kernel_aggregate.hpp) cost no copy of the
  // day. `visit` must be quick and must not call back into the store.
  void for_each(const KernelQuery& q, const std::function<void(const KernelWindow&)>& visit) const;
  // The newest window of each (GPU, pid) that ended at or after `since_unix_s`.
  std::vector<KernelWindow> latest(double since_unix_s) const;

  std::size_t size() const;
  std::size_t windows_per_gpu() const { return per_gpu_; }
  // Memory the windows hold, in bytes (strings and vectors by capacity).
  std::size_t bytes() const;

 private:
  std::size_t per_gpu_;
  mutable std::mutex mutex_;
  struct Ring {
    std::deque<KernelWindow> windows;              // in arrival order
    std::map<std::uint32_t, std::size_t> per_pid;  // windows held per process
  };
  std::map<int, Ring> by_gpu_;
};

// The bytes one stored window holds.
std::size_t window_bytes(const KernelWindow& w);

}  // namespace gpulens::agent

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel windows of a time range summed per GPU and process, for
// /api/v1/kernels/summary and the dashboard's "Where the time went"
// (docs/kernels-agent.md): a day of an 8-GPU node is 34,560 windows, too many to
// ship to a browser, and the sum is a few kilobytes.
//
// Each window names its top kernels and folds the rest into `other`, so summed
// over a range a kernel's time is what the windows that named it say; its time
// in windows that did not name it is in `other`. Named kernels are merged by
// name, ranked by time, and those past `top` join `other` too: the kernel time
// (named + other) is always the windows' sum.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/kernel_store.hpp"
#include "kernels/kernel_summary.hpp"
#include "sources/host/kube_pods.hpp"

namespace gpulens::agent {

inline constexpr std::size_t kKernelSummaryTop = 6;  // the dashboard names six
inline constexpr std::size_t kKernelSummaryMaxTop = kernels::kMaxSummaryTop;

struct KernelProcessSummary {  // one (GPU, pid) over the range
  int gpu = 0;
  std::uint32_t pid = 0;
  // The newest window's (by end time): a process keeps its pid, not always its name or pod.
  std::uint32_t uid = 0, device = 0;
  std::string process;
  sources::KubeRef kube;
  std::size_t windows = 0;
  std::int64_t oldest_start_unix_ns = 0, newest_end_unix_ns = 0;
  std::uint64_t busy_ns = 0, idle_ns = 0;
  std::vector<kernels::KernelTime> top;  // merged by name, longest first, at most `top`
  std::uint64_t other_launches = 0, other_ns = 0;
  std::size_t other_named = 0;  // distinct named kernels past `top`, folded into other
  std::uint64_t kernel_ns = 0;  // named + other: every window's kernel time
  kernels::WorkTotal collectives, copies, memsets;
  std::uint64_t cupti_dropped = 0, summaries_dropped = 0;
};

// Windows in, one summary per (GPU, pid) out. Windows may come in any order.
class KernelAggregator {
 public:
  explicit KernelAggregator(std::size_t top = kKernelSummaryTop) : top_(top) {}

  void add(const KernelWindow& w);
  // Sorted by GPU, then by kernel time, longest first (then by pid).
  std::vector<KernelProcessSummary> result() const;

 private:
  struct Merged {
    std::uint64_t launches = 0, ns = 0;
  };
  // Heterogeneous lookup: a window's name is looked up without a copy.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Process {
    KernelProcessSummary sum;  // all but top and other's named part
    std::unordered_map<std::string, Merged, NameHash, std::equal_to<>> kernels;
  };
  std::size_t top_;
  std::map<std::pair<int, std::uint32_t>, Process> by_process_;
};

// The windows of `q` in `store` summed without copying them (KernelStore::for_each).
std::vector<KernelProcessSummary> summarise_kernels(const KernelStore& store, const KernelQuery& q,
                                                    std::size_t top = kKernelSummaryTop);

}  // namespace gpulens::agent

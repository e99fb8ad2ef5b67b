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
#include "kernels/record/summary_datagram.hpp"

namespace gpulens::agent {

inline constexpr std::size_t kKernelTotalTop = 6;  // the dashboard names six
inline constexpr std::size_t kKernelTotalMaxTop = kernels::kMaxSummaryTop;

// One (GPU, pid)'s windows over the range summed into one window, from the
// oldest one's start to the newest one's end; who ran it (uid, device, process,
// pod) is the newest window's: a process keeps its pid, not always its name or
// pod. `top` is merged by name, longest first, at most `top`; `other_kernels`
// stays 0 (a window's count of unnamed kernels does not add up over windows).
struct KernelProcessTotal : KernelWindow {
  std::size_t windows = 0;
  std::size_t other_named = 0;  // distinct named kernels past `top`, folded into other
  std::uint64_t kernel_ns = 0;  // named + other: every window's kernel time
};

// Windows in, one total per (GPU, pid) out. Windows may come in any order.
class KernelAggregator {
 public:
  explicit KernelAggregator(std::size_t top = kKernelTotalTop) : top_(top) {}

  void add(const KernelWindow& w);
  // Sorted by GPU, then by kernel time, longest first (then by pid).
  std::vector<KernelProcessTotal> result() const;

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
    KernelProcessTotal sum;  // all but top and other's named part
    std::unordered_map<std::string, Merged, NameHash, std::equal_to<>> kernels;
  };
  std::size_t top_;
  std::map<std::pair<int, std::uint32_t>, Process> by_process_;
};

// The windows of `q` in `store` totalled without copying them (KernelStore::for_each).
std::vector<KernelProcessTotal> total_kernels_by_process(const KernelStore& store,
                                                         const KernelQuery& q,
                                                         std::size_t top = kKernelTotalTop);

}  // namespace gpulens::agent

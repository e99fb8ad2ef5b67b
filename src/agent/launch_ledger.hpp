// SPDX-License-Identifier: Apache-2.0
#pragma once
// The jobs' launch counts at the agent (docs/kernels-agent.md, "Launch counts"): a
// process preloaded with libgpulens_launches.so and $GPULENS_LAUNCHES_AGENT sends its
// counts since its start (kernels/record/launch_record.hpp) 1, 2, 4 and 8 s after its
// first launch, then every 10 s and at its exit. The ledger keeps each process's last
// counts and hands the series only what is new, so the counters per GPU are sums of
// what each process launched while the agent ran, whatever the number of sends.
//
// The sender is checked before it gets here (kernel_receiver.cpp: the kernel's
// credentials, a process the sampler sees on a GPU); what it says about its counts is
// only held to adding up: counts that go back are refused, and no kernel's series
// gets more than the process's new launches.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "agent/kernel_series.hpp"
#include "kernels/record/launch_record.hpp"
#include "sources/host/kube_pods.hpp"

namespace gpulens::agent {

// Processes whose last counts are kept; past it, those no longer on a GPU are forgotten
// first, and then a new process is refused.
inline constexpr std::size_t kLaunchLedgerProcesses = 4096;
// Forgotten processes whose totals are still kept (16 bytes and a key each), the oldest
// dropped first: one that comes back to a GPU goes on from them instead of counting its
// whole past again.
inline constexpr std::size_t kLaunchLedgerForgotten = 16384;

// Who sent the counts, as the agent knows it (never as the datagram says).
struct LaunchSender {
  std::uint32_t pid = 0;
  std::uint64_t start_ticks = 0;         // 0: not known
  std::vector<int> gpus;                 // the GPUs it holds, ascending
  std::map<int, sources::KubeRef> kube;  // its pod per GPU, where known
};

enum class LaunchTake { Taken, WentBack, Full };

class LaunchLedger {
 public:
  // `series` may be null (counts are checked and kept, nothing is exported).
  // Launches a process made before `since_unix_ns` (the agent's start) are not counted:
  // a process's first record then only sets where its counting starts.
  LaunchLedger(KernelSeries* series, std::int64_t since_unix_ns,
               std::size_t max_processes = kLaunchLedgerProcesses);

  // The record's new launches into the series for each of the sender's GPUs. Refused:
  // counts lower than the process's last (WentBack), a new process past max_processes
  // (Full). Names become labels (kernel_label: safe to show, bounded).
  LaunchTake take(const LaunchSender& who, const kernels::LaunchRecord& r, double now_s);
  // Forgets the processes `gone` says have left (pid, start ticks), all but their
  // totals (kLaunchLedgerForgotten): a process away from the GPUs for a while (the
  // caller's judgement) that sends again is counted from those, its kernels named from
  // its next send.
  void forget_if(const std::function<bool(std::uint32_t pid, std::uint64_t start)>& gone);

  std::size_t processes() const { return last_.size(); }

 private:
  using Key = std::pair<std::uint32_t, std::uint64_t>;  // pid, start ticks
  struct Totals {
    std::uint64_t kernel_launches = 0, graph_launches = 0;
  };
  struct Last {
    Totals totals;
    std::map<std::string, std::uint64_t> by_label;  // listed launches per kernel label
  };
  KernelSeries* series_;
  std::int64_t since_unix_ns_;
  std::size_t max_processes_;
  std::map<Key, Last> last_;
  std::map<Key, Totals> forgotten_;
  std::deque<Key> forgotten_order_;  // oldest first; may name keys taken back since
};

}  // namespace gpulens::agent

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
  // (Full). Names are the record's (the caller makes them safe).
  LaunchTake take(const LaunchSender& who, const kernels::LaunchRecord& r, double now_s);
  // Forgets the processes `gone` says have left (pid, start ticks).
  void forget_if(const std::function<bool(std::uint32_t pid, std::uint64_t start)>& gone);

  std::size_t processes() const { return last_.size(); }

 private:
  struct Last {
    std::uint64_t kernel_launches = 0, graph_launches = 0;
    std::map<std::string, std::uint64_t> by_label;  // listed launches per kernel label
  };
  KernelSeries* series_;
  std::int64_t since_unix_ns_;
  std::size_t max_processes_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, Last> last_;
};

}  // namespace gpulens::agent

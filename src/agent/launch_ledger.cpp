// SPDX-License-Identifier: Apache-2.0
#include "agent/launch_ledger.hpp"

#include "kernels/record/kernel_label.hpp"

namespace gpulens::agent {

LaunchLedger::LaunchLedger(KernelSeries* series, std::int64_t since_unix_ns,
                           std::size_t max_processes)
    : series_(series), since_unix_ns_(since_unix_ns), max_processes_(max_processes) {}

void LaunchLedger::forget_if(
    const std::function<bool(std::uint32_t pid, std::uint64_t start)>& gone) {
  for (auto it = last_.begin(); it != last_.end();) {
    if (!gone(it->first.first, it->first.second)) {
      ++it;
      continue;
    }
    forgotten_[it->first] = it->second.totals;
    forgotten_order_.push_back(it->first);
    it = last_.erase(it);
  }
  while (forgotten_.size() > kLaunchLedgerForgotten) {
    // A key taken back since erases nothing (or, forgotten again, its later entry early).
    forgotten_.erase(forgotten_order_.front());
    forgotten_order_.pop_front();
  }
  // Keys taken back leave stale entries in the order; it never grows past twice the bound.
  if (forgotten_order_.size() > 2 * kLaunchLedgerForgotten) {
    std::erase_if(forgotten_order_, [this](const Key& k) { return !forgotten_.contains(k); });
  }
}

LaunchTake LaunchLedger::take(const LaunchSender& who, const kernels::LaunchRecord& r,
                              double now_s) {
  const Key key{who.pid, who.start_ticks};
  auto it = last_.find(key);
  const auto away = it == last_.end() ? forgotten_.find(key) : forgotten_.end();
  // New to the ledger: neither kept nor forgotten with its totals.
  const bool first = it == last_.end() && away == forgotten_.end();
  if (it == last_.end() && last_.size() >= max_processes_) {
    return LaunchTake::Full;
  }
  // Names that read the same as labels (instantiations of one template) are one,
  // as in the time series.
  std::map<std::string, std::uint64_t> by_label;
  for (const auto& k : r.kernels) by_label[kernels::kernel_label(k.name)] += k.launches;

  // Back after being forgotten: its totals are known, its kernels' counts not, so its
  // new launches go to other this once (as a kernel listed late), never counted twice.
  Last before;
  if (it != last_.end()) {
    before = it->second;
  } else if (away != forgotten_.end()) {
    before.totals = away->second;
  }
  const Totals now{r.kernel_launches, r.graph_launches};
  if (!first) {
    if (now.kernel_launches < before.totals.kernel_launches ||
        now.graph_launches < before.totals.graph_launches) {
      return LaunchTake::WentBack;
    }
    if (away != forgotten_.end()) forgotten_.erase(away);
  } else if (r.first_ns < since_unix_ns_) {
    // Launched before the agent started: counting starts from here, so that a rate
    // over the agent's first minutes is not the process's whole past at once.
    last_.emplace(key, Last{now, std::move(by_label)});
    return LaunchTake::Taken;
  }

  LaunchDelta d;
  d.kernel_launches = now.kernel_launches - before.totals.kernel_launches;
  d.graph_launches = now.graph_launches - before.totals.graph_launches;
  // A kernel's new launches are what its listed count grew by. One newly listed (it
  // entered the process's most launched) starts from its count now: its earlier
  // launches were counted as unnamed. No kernel gets more than the new launches.
  std::uint64_t left = d.kernel_launches;
  for (const auto& [label, n] : by_label) {
    std::uint64_t grew = 0;
    if (first) {
      grew = n;
    } else if (const auto b = before.by_label.find(label); b != before.by_label.end()) {
      grew = n > b->second ? n - b->second : 0;
    }
    grew = std::min(grew, left);
    left -= grew;
    if (grew > 0) d.named.emplace_back(label, grew);
  }
  d.unnamed = left;
  if (it == last_.end()) {
    it = last_.emplace(key, Last{}).first;
  }
  it->second = Last{now, std::move(by_label)};
  if (series_ == nullptr || (d.kernel_launches == 0 && d.graph_launches == 0))
    return LaunchTake::Taken;
  // A process's launches do not say which of its GPUs ran them: each GPU it holds
  // is fed all of them (one process per GPU, the usual case, is exact).
  for (int gpu : who.gpus) {
    d.gpu = gpu;
    const auto k = who.kube.find(gpu);
    d.pod = k != who.kube.end() ? k->second : sources::KubeRef{};
    series_->add_launches(d, now_s);
  }
  return LaunchTake::Taken;
}

}  // namespace gpulens::agent

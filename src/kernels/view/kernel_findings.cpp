// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/kernel_findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>

#include "core/text_units.hpp"
#include "kernels/view/collectives.hpp"
#include "kernels/view/reconcile.hpp"

namespace gpulens::kernels {
namespace {

// The window the first device's idle time is read over: its marked steps when
// there are some, else what was traced of it.
const IdleStats& idle_window(const DeviceView& d) {
  return d.steps ? d.steps->idle : d.activity;
}

// The gap-length bucket that holds most idle time.
std::size_t largest_gap_bucket(const IdleStats& w) {
  std::size_t top = 0;
  for (std::size_t i = 1; i < w.gaps.seconds.size(); ++i) {
    if (w.gaps.seconds[i] > w.gaps.seconds[top]) top = i;
  }
  return top;
}

// ", 62 % of it inside the NVTX range `data`" when one range holds half the idle time or more.
std::string idle_range_clause(const KernelView& view) {
  if (!view.nvtx || !(view.nvtx->window_idle_s > 0)) return {};
  const RangeRow* most = nullptr;
  for (const auto& r : view.nvtx->ranges) {
    if (most == nullptr || r.attributed_idle_s > most->attributed_idle_s) most = &r;
  }
  const double share = most->attributed_idle_s / view.nvtx->window_idle_s;
  if (share < 0.5) return {};
  return fmt::format(", {} of it inside the NVTX range `{}`", share_text(share), most->name);
}

// Kernels leaving most SMs idle. Not a collective: its few blocks are channels
// moving data or spinning on a peer, and more blocks would not make it faster.
void add_low_sm_coverage(const KernelView& view, std::vector<Finding>& out) {
  for (const auto& k : view.top) {
    if (!k.collective && k.coverage_known && k.share >= 0.05 && k.sms_used * 2 < k.sms) {
      out.push_back(
          {"low_sm_coverage",
           fmt::format("`{}` takes {} of GPU time with {} of {} SMs busy ({} blocks of {} threads)",
                       k.short_name, share_text(k.share), k.sms_used, k.sms, k.blocks, k.threads),
           "give it more parallel work (a larger batch, more blocks, split-K) or fuse it with its "
           "neighbours (torch.compile; FlashAttention for attention)"});
    }
  }
}

// Host-bound (long gaps), launch-bound (short gaps between short kernels) and
// synchronisations, all read on the first device.
void add_idle_findings(const KernelView& view, std::vector<Finding>& out) {
  const DeviceView& d = view.devices.front();
  const IdleStats& w = idle_window(d);
  const char* where = d.steps                 ? "of the marked steps"
                      : view.sampling.sampled ? "in the trace windows"
                                              : "between the first and last GPU work";
  const double small = w.gaps.seconds[0] + w.gaps.seconds[1];
  const double large = w.gaps.seconds[3] + w.gaps.seconds[4];
  const std::uint64_t small_n = w.gaps.count[0] + w.gaps.count[1];
  const std::uint64_t large_n = w.gaps.count[3] + w.gaps.count[4];
  const double mean_kernel_s =
      view.launches > 0 ? view.kernel_s / static_cast<double>(view.launches) : 0;
  if (w.window_s > 0 && large / w.window_s >= 0.2) {
    std::string per_step;
    if (d.steps) {
      per_step =
          fmt::format("; per step {} idle of {}", kernel_time_text(d.steps->mean_idle_per_step_s),
                      kernel_time_text(d.steps->mean_step_s));
    }
    out.push_back(
        {"host_bound",
         fmt::format("the GPU sat idle {} of the time {} in {} gaps of 1 ms or more{}: it waits "
                     "for the host (data loading, Python, I/O)",
                     share_text(large / w.window_s), where, large_n, per_step),
         "feed it ahead of time: DataLoader(num_workers=N, pin_memory=True, prefetch), move "
         "per-step host work (decoding, augmentation, logging) off the critical path"});
  }
  if (w.window_s > 0 && small / w.window_s >= 0.2 && mean_kernel_s < 50e-6) {
    out.push_back(
        {"launch_bound",
         fmt::format("the GPU sat idle {} of the time {} in {} gaps shorter than 100 µs, between "
                     "kernels of {} on average: the host cannot launch them fast enough",
                     share_text(small / w.window_s), where, small_n,
                     kernel_time_text(mean_kernel_s)),
         "launch fewer, larger kernels: CUDA graphs (torch.compile(mode=\"reduce-overhead\")), "
         "fused kernels, a larger batch"});
  }
  if (d.steps && d.steps->syncs_per_step >= 3) {
    out.push_back(
        {"syncs",
         fmt::format("{:.1f} CUDA synchronisations per step, the host blocked {} per step in them",
                     d.steps->syncs_per_step, kernel_time_text(d.steps->sync_s_per_step)),
         "remove .item(), .cpu(), print(tensor) and torch.cuda.synchronize() from the step; keep "
         "running values on the GPU and read them every N steps"});
  }
}

void add_pageable_copies(const KernelView& view, std::vector<Finding>& out) {
  for (const auto& c : view.copies) {
    if (c.pageable && c.bytes >= (1u << 20)) {
      out.push_back(
          {"pageable_copies",
           fmt::format("{:.0f} MB copied {} from pageable host memory in {} copies at {}",
                       static_cast<double>(c.bytes) / 1e6, c.kind, c.count,
                       gb_rate_text(c.gb_per_s)),
           "pin the host buffers (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with "
           "non_blocking=True, so copies run at full PCIe speed and overlap compute"});
    }
  }
}

// The collectives among the listed kernels: their share of kernel time, the
// libraries ("NCCL collectives") and the operations with their shares
// ("`AllReduce` 40 %, `AllGather` 5 %").
struct CollectiveShares {
  double total = 0;
  std::string libraries, parts;
};

CollectiveShares collective_shares(const KernelView& view) {
  CollectiveShares out;
  std::set<std::string_view> libraries;
  std::vector<std::pair<std::string, double>> parts;  // in the rows' order: most time first
  for (const auto& k : view.top) {
    const auto kind = k.collective ? classify_collective(k.name) : std::nullopt;
    if (!kind) continue;
    out.total += k.share;
    libraries.insert(collective_library_name(kind->library));
    const std::string what = kind->operation.empty() ? k.short_name : kind->operation;
    auto it =
        std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.first == what; });
    if (it == parts.end()) {
      parts.emplace_back(what, k.share);
    } else {
      it->second += k.share;
    }
  }
  for (const auto& lib : libraries) {
    out.libraries += (out.libraries.empty() ? "" : ", ") + std::string(lib);
  }
  out.libraries += " collectives";
  for (const auto& [what, share] : parts) {
    out.parts += fmt::format("{}`{}` {}", out.parts.empty() ? "" : ", ", what, share_text(share));
  }
  return out;
}

// The rank that waited longest for another, or none.
const RankSplit* most_waiting(const std::vector<RankSplit>& split) {
  const RankSplit* most = nullptr;
  for (const auto& r : split) {
    if (r.waited_for && r.waited_for_s > 0 && *r.waited_for < split.size() &&
        (most == nullptr || r.waiting_s > most->waiting_s)) {
      most = &r;
    }
  }
  return most;
}

}  // namespace

std::string kernel_headline(const KernelView& view) {
  if (view.devices.empty()) return {};
  static const char* const kWhy[] = {"launch overhead between back-to-back kernels",
                                     "kernel launches the host could not issue faster",
                                     "short host stalls (Python, synchronisations)",
                                     "the host (data loading, Python, I/O)",
                                     "the host (data loading, I/O, long host work)"};
  const DeviceView& d = view.devices.front();
  const IdleStats& w = idle_window(d);
  const std::size_t top_bucket = largest_gap_bucket(w);
  const char* over = d.steps                 ? "the marked steps"
                     : view.sampling.sampled ? "the trace windows"
                                             : "the time from its first to its last work";
  std::string headline =
      fmt::format("The GPU was busy {} of {}", share_text(1 - w.idle_share), over);
  if (view.sampling.sampled && d.steps) headline += " inside the trace windows";
  // Windows that hold little of the job, or read otherwise than its counters:
  // the job-wide figure goes beside theirs (reconcile.hpp).
  for (const auto& r : view.reconciliation) {
    if (r.device == d.device) headline += reconcile_clause(r.job, d.steps.has_value());
  }
  if (w.idle_share > 0.005) {
    headline += fmt::format("; the idle {} lies mostly in gaps of {}: {}", share_text(w.idle_share),
                            kGapLabels[top_bucket], kWhy[top_bucket]);
    headline += idle_range_clause(view);
  }
  if (!view.top.empty()) {
    const KernelRow& top = view.top.front();
    headline +=
        fmt::format(". `{}` holds {} of kernel time", top.short_name, share_text(top.share));
    if (const auto kind = top.collective ? classify_collective(top.name) : std::nullopt) {
      headline += fmt::format(": communication ({} collective), not compute",
                              collective_library_name(kind->library));
    }
  }
  headline += ".";
  return headline;
}

std::optional<Finding> communication_finding(const KernelView& view,
                                             const std::vector<RankSplit>* split) {
  const CollectiveShares shares = collective_shares(view);
  if (shares.total < kCommunicationShareMin) return std::nullopt;
  std::string text = fmt::format(
      "{} take {} of kernel time ({}): time spent moving data between "
      "GPUs or waiting for a peer rank, not compute",
      shares.libraries, share_text(shares.total), shares.parts);
  std::string fix;
  if (split == nullptr) split = &view.collective_ranks;
  const RankSplit* waiter = most_waiting(*split);
  if (waiter != nullptr) {
    const RankSplit& slow = (*split)[*waiter->waited_for];
    text += fmt::format(
        "; rank {} waited {} of its {} in collectives{} for {}", waiter->label,
        kernel_time_text(waiter->waiting_s), kernel_time_text(waiter->waiting_s + waiter->moving_s),
        waiter->waited_for_s < waiter->waiting_s ? ", most of it," : "", slow.label);
    fix = fmt::format(
        "{} arrives last: find what holds it up before the collective (work only it does, such "
        "as logging, evaluation or checkpointing on rank 0; a slower input pipeline or GPU) and "
        "move it off the step or spread it over every rank; ",
        slow.label);
  } else {
    fix =
        "if the ranks wait for each other, find the slowest rank (the one the others wait for) "
        "and even out its work; ";
  }
  fix +=
      "overlap communication with compute (DDP's gradient buckets, bucket_cap_mb, let the "
      "all-reduce run during backward) and communicate less often (gradient accumulation under "
      "model.no_sync()). More blocks or a larger grid do not speed up a collective";
  return Finding{"communication", std::move(text), std::move(fix)};
}

std::vector<Finding> kernel_findings(const KernelView& view, const std::vector<RankSplit>* split) {
  // The rules of docs/kernels.md ("Fixes" under "The analysis, stated as rules").
  std::vector<Finding> out;
  if (auto f = communication_finding(view, split)) out.push_back(std::move(*f));
  add_low_sm_coverage(view, out);
  if (!view.devices.empty()) add_idle_findings(view, out);
  add_pageable_copies(view, out);
  return out;
}

}  // namespace gpulens::kernels

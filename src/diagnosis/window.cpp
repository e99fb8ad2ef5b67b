// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/window.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "core/clock_reasons.hpp"
#include "core/gpm_interval.hpp"

namespace gpulens::diagnosis {
namespace {

constexpr double kMargin = 2.0;  // points: counter jitter that must not bridge two levels
// Utilization is an integer percent and SM activity reads ~0.001 % at rest: a
// sample at or above 1 % in either had a kernel resident.
constexpr double kKernelFloorPct = 1.0;

std::optional<double> link_share_pct(const MetricValues& v, Metric rx, Metric tx,
                                     std::optional<double> capacity) {
  if (!capacity || *capacity <= 0) return std::nullopt;
  if (!v.has(rx) && !v.has(tx)) return std::nullopt;
  return std::max(v.value_or(rx, 0.0), v.value_or(tx, 0.0)) / *capacity * 100.0;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  double sum = 0;
  std::size_t n = 0;
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    ++n;
  }
  double mean() const { return n ? sum / static_cast<double>(n) : 0.0; }
};

}  // namespace

ProcessSummary summarize_processes(const Sample& sample) {
  ProcessSummary p;
  if (!sample.procs) return p;
  p.known = true;
  p.count = sample.procs->size();
  for (const auto& proc : *sample.procs) {
    if (proc.used_mib) {
      p.used_mib = p.used_mib.value_or(0.0) + *proc.used_mib;
      if (!p.top_mem_mib || *proc.used_mib > *p.top_mem_mib) {
        p.top_mem_mib = proc.used_mib;
        p.top_mem_name = proc.name;
        p.top_mem_pid = proc.pid;
      }
    }
    if (proc.cpu_pct) p.cpu_pct = p.cpu_pct.value_or(0.0) + *proc.cpu_pct;
    if (proc.cpu_pct && (!p.top_cpu_pct || *proc.cpu_pct > *p.top_cpu_pct)) {
      p.top_cpu_pct = proc.cpu_pct;
      p.top_cpu_name = proc.name;
      p.top_cpu_pid = proc.pid;
    }
  }
  return p;
}

SampleWindow::SampleWindow(WindowSettings settings, HardwareLimits limits)
    : settings_(settings), limits_(std::move(limits)) {
  stats_.gpu = limits_.gpu;
}

void SampleWindow::reset() {
  entries_.clear();
  const int gpu = stats_.gpu;
  ProcessSummary procs = std::move(stats_.procs);  // processes outlive a phase mark
  stats_ = WindowStats{};
  stats_.gpu = gpu;
  stats_.procs = std::move(procs);
}

SampleWindow::Signature SampleWindow::signature(const MetricValues& v) const {
  return {v.get(Metric::GpuUtil),
          v.get(Metric::SmActive),
          v.get(Metric::DramActive),
          v.get(Metric::TensorActive),
          link_share_pct(v, Metric::PcieRxMibs, Metric::PcieTxMibs, limits_.pcie_mibs),
          link_share_pct(v, Metric::NvlinkRxMibs, Metric::NvlinkTxMibs, limits_.nvlink_mibs)};
}

void SampleWindow::push(const Sample& sample) {
  // Recorders list processes less often than they sample counters: the last
  // list stands until it is clearly stale.
  if (sample.procs) {
    stats_.procs = summarize_processes(sample);
    procs_t_ = sample.t;
  } else if (stats_.procs.known && sample.t - procs_t_ > std::max(10.0, 2 * settings_.length_s)) {
    stats_.procs = ProcessSummary{};
  }
  Entry entry{sample.t, sample.values, false};
  if (gpm_interval_empty(sample)) {
    Sample cleaned = sample;
    drop_empty_gpm_interval(cleaned);
    entry.values = cleaned.values;
    entry.empty_gpm = true;
  }
  entries_.push_back(std::move(entry));
  const double oldest_kept = sample.t - settings_.length_s;
  while (entries_.size() > 1 && entries_.front().t <= oldest_kept) entries_.pop_front();
  cut_at_level_shift();
  recompute();
}

// Finds the most recent point k such that the samples since k (at least
// change_min_s of them) lie entirely apart from every sample before k, with a
// mean difference of change_min_shift points, in one signature component. A
// duty-cycled workload never qualifies (its old part holds the new level too),
// so its window keeps averaging over whole periods.
void SampleWindow::cut_at_level_shift() {
  const std::size_t n = entries_.size();
  if (n < 3 || settings_.change_min_s <= 0) return;
  std::vector<Signature> sig(n);
  for (std::size_t i = 0; i < n; ++i) sig[i] = signature(entries_[i].values);

  // suffix[k] describes samples [k, n) for each component.
  std::vector<std::array<Range, kSignature>> suffix(n + 1);
  for (std::size_t i = n; i-- > 0;) {
    suffix[i] = suffix[i + 1];
    for (std::size_t j = 0; j < kSignature; ++j) {
      if (sig[i][j]) suffix[i][j].add(*sig[i][j]);
    }
  }
  std::vector<std::array<Range, kSignature>> prefix(n + 1);  // samples [0, k)
  for (std::size_t i = 0; i < n; ++i) {
    prefix[i + 1] = prefix[i];
    for (std::size_t j = 0; j < kSignature; ++j) {
      if (sig[i][j]) prefix[i + 1][j].add(*sig[i][j]);
    }
  }

  const double newest = entries_.back().t;
  for (std::size_t k = n - 1; k >= 1; --k) {
    // The new part covers from the sample before k (its interval start) to now.
    if (newest - entries_[k - 1].t < settings_.change_min_s) continue;
    for (std::size_t j = 0; j < kSignature; ++j) {
      const Range& old_part = prefix[k][j];
      const Range& new_part = suffix[k][j];
      if (old_part.n == 0 || new_part.n == 0) continue;
      const bool apart = old_part.lo > new_part.hi + kMargin || old_part.hi < new_part.lo - kMargin;
      if (apart && std::abs(old_part.mean() - new_part.mean()) >= settings_.change_min_shift) {
        entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(k));
        ++restarts_;
        return;
      }
    }
  }
}

void SampleWindow::recompute() {
  WindowStats& s = stats_;
  s.samples = entries_.size();
  s.mean = {};
  s.min = {};
  s.max = {};
  s.throttle_share = 0;
  s.throttle_reasons = 0;
  s.kernel_sample_share = 0;
  s.empty_gpm_intervals = 0;
  if (entries_.empty()) return;
  s.start = entries_.front().t;
  s.end = entries_.back().t;
  s.last = entries_.back().values;
  const auto n = entries_.size();
  s.covered_s =
      n > 1 ? (s.end - s.start) * static_cast<double>(n) / static_cast<double>(n - 1) : 0.0;

  std::array<Range, kMetricCount> ranges;
  std::size_t reason_samples = 0;
  std::size_t throttled_samples = 0;
  std::size_t judged_samples = 0;
  std::size_t kernel_samples = 0;
  for (const auto& e : entries_) {
    if (e.empty_gpm) ++s.empty_gpm_intervals;
    const auto util = e.values.get(Metric::GpuUtil);
    const auto sm = e.values.get(Metric::SmActive);
    if (util || sm) {
      ++judged_samples;
      if (util.value_or(0) >= kKernelFloorPct || sm.value_or(0) >= kKernelFloorPct) {
        ++kernel_samples;
      }
    }
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      if (const auto v = e.values.get(static_cast<Metric>(m))) ranges[m].add(*v);
    }
    if (const auto r = e.values.get(Metric::ClockEventReasons)) {
      ++reason_samples;
      const auto bits = static_cast<std::uint64_t>(*r) & clock_reason::kThrottling;
      if (bits != 0) {
        ++throttled_samples;
        s.throttle_reasons |= bits;
      }
    }
  }
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    if (ranges[m].n == 0) continue;
    const auto metric = static_cast<Metric>(m);
    s.mean.set(metric, ranges[m].mean());
    s.min.set(metric, ranges[m].lo);
    s.max.set(metric, ranges[m].hi);
  }
  if (judged_samples > 0) {
    s.kernel_sample_share =
        static_cast<double>(kernel_samples) / static_cast<double>(judged_samples);
  }
  if (reason_samples > 0) {
    s.throttle_share = static_cast<double>(throttled_samples) / static_cast<double>(reason_samples);
  }
}

}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
#include "agent/kernel_series.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "kernels/record/kernel_label.hpp"

namespace gpulens::agent {
namespace {

double seconds_of(std::uint64_t ns) {
  return static_cast<double>(ns) / kNsPerS;
}

// Names waiting for a slot, per GPU: enough to rank a few windows' top lists.
std::size_t waiting_bound(std::size_t top) {
  return 4 * top + 16;
}

}  // namespace

bool KernelSeries::PodLess::operator()(const sources::KubeRef& a, const sources::KubeRef& b) const {
  return std::tie(a.namespace_name, a.pod, a.container) <
         std::tie(b.namespace_name, b.pod, b.container);
}

bool KernelSeries::KeyLess::operator()(const Key& a, const Key& b) const {
  if (PodLess{}(a.first, b.first)) return true;
  if (PodLess{}(b.first, a.first)) return false;
  return a.second < b.second;
}

KernelSeries::KernelSeries(KernelSeriesOptions options) : options_(options) {
  options_.half_life_s = std::max(options_.half_life_s, 1.0);
}

double KernelSeries::recent_at(const Recent& r, double now_s) const {
  return r.value * std::exp2(-std::max(0.0, now_s - r.at_s) / options_.half_life_s);
}

void KernelSeries::bump(Recent& r, double amount, double now_s) const {
  r.value = recent_at(r, now_s) + amount;
  r.at_s = now_s;
}

void KernelSeries::remember(Slots& s, const Key& key, double amount, double now_s) {
  auto it = s.waiting.find(key);
  if (it == s.waiting.end()) {
    if (s.waiting.size() >= waiting_bound(options_.top)) {
      // Full: the least recent goes, so a flood of new names forgets itself.
      auto least = s.waiting.begin();
      for (auto w = s.waiting.begin(); w != s.waiting.end(); ++w) {
        if (recent_at(w->second, now_s) < recent_at(least->second, now_s)) least = w;
      }
      s.waiting.erase(least);
    }
    it = s.waiting.emplace(key, Recent{0, now_s}).first;
  }
  bump(it->second, amount, now_s);
}

void KernelSeries::retire(Slots& s, const Gpu& g, double now_s) {
  const double after = options_.retire_after_s;
  retired_ += std::erase_if(s.named, [&](const auto& n) {
    return now_s - n.second.last_time_s >= after || !g.pods.contains(n.first.first);
  });
  std::erase_if(s.waiting, [&](const auto& w) {
    return now_s - w.second.at_s >= after || !g.pods.contains(w.first.first);
  });
}

void KernelSeries::retire(Gpu& g, double now_s) {
  const double after = options_.retire_after_s;
  std::erase_if(g.pods, [&](const auto& p) { return now_s - p.second.last_s >= after; });
  retire(g.time, g, now_s);
  retire(g.launches, g, now_s);
}

// The most recent waiting name into a free slot, or into the slot of the least
// recent named series that has held it long enough. One move per window: the
// work per window stays bounded.
void KernelSeries::promote(Slots& s, double now_s) {
  if (s.waiting.empty() || options_.top == 0) return;
  auto best = s.waiting.begin();
  for (auto w = s.waiting.begin(); w != s.waiting.end(); ++w) {
    if (recent_at(w->second, now_s) > recent_at(best->second, now_s)) best = w;
  }
  if (s.named.size() >= options_.top) {
    auto weakest = s.named.end();
    for (auto n = s.named.begin(); n != s.named.end(); ++n) {
      if (now_s - n->second.since_s < options_.retire_after_s) continue;
      if (weakest == s.named.end() ||
          recent_at(n->second.recent, now_s) < recent_at(weakest->second.recent, now_s)) {
        weakest = n;
      }
    }
    if (weakest == s.named.end() ||
        recent_at(weakest->second.recent, now_s) >= recent_at(best->second, now_s)) {
      return;
    }
    // The replaced name waits again, with its recent amount.
    const Key out = weakest->first;
    const Recent out_recent = weakest->second.recent;
    s.named.erase(weakest);
    ++retired_;
    const Key in = best->first;
    const Recent in_recent = best->second;
    s.waiting.erase(best);
    s.waiting.emplace(out, out_recent);
    s.named.emplace(in, Named{0, in_recent, now_s, now_s});
    return;
  }
  s.named.emplace(best->first, Named{0, best->second, now_s, now_s});
  s.waiting.erase(best);
}

bool KernelSeries::add_named(Slots& s, const Key& key, double amount, double now_s) {
  auto n = s.named.find(key);
  if (n == s.named.end() && s.named.size() < options_.top) {  // a free slot
    Recent recent{0, now_s};
    if (const auto wait = s.waiting.find(key); wait != s.waiting.end()) {
      recent = wait->second;
      s.waiting.erase(wait);
    }
    n = s.named.emplace(key, Named{0, recent, now_s, now_s}).first;
  }
  if (n == s.named.end()) {
    remember(s, key, amount, now_s);
    return false;
  }
  n->second.amount += amount;
  n->second.last_time_s = now_s;
  bump(n->second.recent, amount, now_s);
  return true;
}

// The pod's totals, `pod` emptied when the GPU already has max_pods others.
KernelSeries::PodTotals& KernelSeries::pod_totals(Gpu& g, sources::KubeRef& pod, double now_s) {
  if (!g.pods.contains(pod) && g.pods.size() >= options_.max_pods) pod = {};
  PodTotals& t = g.pods[pod];
  t.last_s = now_s;
  return t;
}

void KernelSeries::add(const KernelWindow& w, double now_s) {
  std::lock_guard lock(mutex_);
  Gpu& g = gpus_[w.gpu];
  retire(g, now_s);
  sources::KubeRef pod{w.kube.namespace_name, w.kube.pod, w.kube.container};
  PodTotals& t = pod_totals(g, pod, now_s);
  t.windows = true;
  // Traced time is the union of the pod's windows: two processes tracing the
  // node's same moments count them once.
  const std::int64_t from = std::max(w.start_unix_ns, t.traced_until_ns);
  if (w.end_unix_ns > from)
    t.traced_s += seconds_of(static_cast<std::uint64_t>(w.end_unix_ns - from));
  t.traced_until_ns = std::max(t.traced_until_ns, w.end_unix_ns);
  t.idle_s += seconds_of(w.idle_ns);
  t.collective_s += seconds_of(w.collectives.ns);
  t.copy_s += seconds_of(w.copies.ns);
  t.memset_s += seconds_of(w.memsets.ns);
  t.other_s += seconds_of(w.other_ns);
  // Names that read the same as labels (instantiations of one template) are one.
  std::map<std::string, double> by_label;
  for (const auto& k : w.top) by_label[kernels::kernel_label(k.name)] += seconds_of(k.ns);
  for (auto& [label, secs] : by_label) {
    if (!add_named(g.time, Key{pod, std::move(label)}, secs, now_s)) t.other_s += secs;
  }
  promote(g.time, now_s);
}

void KernelSeries::add_launches(const LaunchDelta& d, double now_s) {
  std::lock_guard lock(mutex_);
  Gpu& g = gpus_[d.gpu];
  retire(g, now_s);
  sources::KubeRef pod = d.pod;
  PodTotals& t = pod_totals(g, pod, now_s);
  t.counted = true;
  t.launches += static_cast<double>(d.kernel_launches);
  t.graph_launches += static_cast<double>(d.graph_launches);
  t.other_launches += static_cast<double>(d.unnamed);
  for (const auto& [label, n] : d.named) {
    const auto launches = static_cast<double>(n);
    if (!add_named(g.launches, Key{pod, label}, launches, now_s)) t.other_launches += launches;
  }
  promote(g.launches, now_s);
}

std::vector<KernelSeriesRow> KernelSeries::rows(double now_s) {
  std::lock_guard lock(mutex_);
  std::vector<KernelSeriesRow> out;
  for (auto it = gpus_.begin(); it != gpus_.end();) {
    retire(it->second, now_s);
    if (it->second.pods.empty()) {
      it = gpus_.erase(it);
      continue;
    }
    for (const auto& [pod, t] : it->second.pods) {
      KernelSeriesRow r;
      r.gpu = it->first;
      r.pod = pod;
      r.traced_s = t.traced_s;
      r.idle_s = t.idle_s;
      r.collective_s = t.collective_s;
      r.copy_s = t.copy_s;
      r.memset_s = t.memset_s;
      r.other_s = t.other_s;
      r.has_windows = t.windows;
      r.has_launches = t.counted;
      r.launches = t.launches;
      r.graph_launches = t.graph_launches;
      r.other_launches = t.other_launches;
      for (const auto& [key, n] : it->second.time.named) {
        if (key.first == pod) r.named.emplace_back(key.second, n.amount);
      }
      for (const auto& [key, n] : it->second.launches.named) {
        if (key.first == pod) r.named_launches.emplace_back(key.second, n.amount);
      }
      out.push_back(std::move(r));
    }
    ++it;
  }
  return out;
}

std::uint64_t KernelSeries::retired() const {
  std::lock_guard lock(mutex_);
  return retired_;
}

std::size_t KernelSeries::waiting() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [gpu, g] : gpus_) n += g.time.waiting.size() + g.launches.waiting.size();
  return n;
}

}  // namespace gpulens::agent

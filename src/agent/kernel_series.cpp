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

void KernelSeries::bump(Recent& r, double seconds, double now_s) const {
  r.value = recent_at(r, now_s) + seconds;
  r.at_s = now_s;
}

void KernelSeries::remember(Gpu& g, const Key& key, double seconds, double now_s) {
  auto it = g.waiting.find(key);
  if (it == g.waiting.end()) {
    if (g.waiting.size() >= waiting_bound(options_.top)) {
      // Full: the least recent goes, so a flood of new names forgets itself.
      auto least = g.waiting.begin();
      for (auto w = g.waiting.begin(); w != g.waiting.end(); ++w) {
        if (recent_at(w->second, now_s) < recent_at(least->second, now_s)) least = w;
      }
      g.waiting.erase(least);
    }
    it = g.waiting.emplace(key, Recent{0, now_s}).first;
  }
  bump(it->second, seconds, now_s);
}

void KernelSeries::retire(Gpu& g, double now_s) {
  const double after = options_.retire_after_s;
  std::erase_if(g.pods, [&](const auto& p) { return now_s - p.second.last_s >= after; });
  retired_ += std::erase_if(g.named, [&](const auto& n) {
    return now_s - n.second.last_time_s >= after || !g.pods.contains(n.first.first);
  });
  std::erase_if(g.waiting, [&](const auto& w) {
    return now_s - w.second.at_s >= after || !g.pods.contains(w.first.first);
  });
}

// The most recent waiting name into a free slot, or into the slot of the least
// recent named series that has held it long enough. One move per window: the
// work per window stays bounded.
void KernelSeries::promote(Gpu& g, double now_s) {
  if (g.waiting.empty() || options_.top == 0) return;
  auto best = g.waiting.begin();
  for (auto w = g.waiting.begin(); w != g.waiting.end(); ++w) {
    if (recent_at(w->second, now_s) > recent_at(best->second, now_s)) best = w;
  }
  if (g.named.size() >= options_.top) {
    auto weakest = g.named.end();
    for (auto n = g.named.begin(); n != g.named.end(); ++n) {
      if (now_s - n->second.since_s < options_.retire_after_s) continue;
      if (weakest == g.named.end() ||
          recent_at(n->second.recent, now_s) < recent_at(weakest->second.recent, now_s)) {
        weakest = n;
      }
    }
    if (weakest == g.named.end() ||
        recent_at(weakest->second.recent, now_s) >= recent_at(best->second, now_s)) {
      return;
    }
    // The replaced name waits again, with its recent time.
    const Key out = weakest->first;
    const Recent out_recent = weakest->second.recent;
    g.named.erase(weakest);
    ++retired_;
    const Key in = best->first;
    const Recent in_recent = best->second;
    g.waiting.erase(best);
    g.waiting.emplace(out, out_recent);
    g.named.emplace(in, Named{0, in_recent, now_s, now_s});
    return;
  }
  g.named.emplace(best->first, Named{0, best->second, now_s, now_s});
  g.waiting.erase(best);
}

void KernelSeries::add(const KernelWindow& w, double now_s) {
  std::lock_guard lock(mutex_);
  Gpu& g = gpus_[w.gpu];
  retire(g, now_s);
  sources::KubeRef pod{w.kube.namespace_name, w.kube.pod, w.kube.container};
  if (!g.pods.contains(pod) && g.pods.size() >= options_.max_pods) pod = {};
  PodTotals& t = g.pods[pod];
  t.last_s = now_s;
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
    Key key{pod, std::move(label)};
    auto n = g.named.find(key);
    if (n == g.named.end() && g.named.size() < options_.top) {  // a free slot
      Recent recent{0, now_s};
      if (const auto wait = g.waiting.find(key); wait != g.waiting.end()) {
        recent = wait->second;
        g.waiting.erase(wait);
      }
      n = g.named.emplace(key, Named{0, recent, now_s, now_s}).first;
    }
    if (n != g.named.end()) {
      n->second.seconds += secs;
      n->second.last_time_s = now_s;
      bump(n->second.recent, secs, now_s);
    } else {
      t.other_s += secs;
      remember(g, key, secs, now_s);
    }
  }
  promote(g, now_s);
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
      KernelSeriesRow r{it->first, pod,        t.traced_s, t.idle_s, t.collective_s,
                        t.copy_s,  t.memset_s, t.other_s,  {}};
      for (const auto& [key, n] : it->second.named) {
        if (key.first == pod) r.named.emplace_back(key.second, n.seconds);
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
  for (const auto& [gpu, g] : gpus_) n += g.waiting.size();
  return n;
}

}  // namespace gpulens::agent

// SPDX-License-Identifier: Apache-2.0
#include "agent/kernel_aggregate.hpp"

#include <algorithm>

namespace gpulens::agent {
namespace {

// Sums of a range's windows are held at the largest count rather than wrapped:
// a total must never read less than one of its parts (the reader bounds each
// window's times, summary_datagram.cpp, but not a day of copies' bytes).
void add_to(std::uint64_t& into, std::uint64_t v) {
  into = kernels::saturating_add(into, v);
}

void add_work(kernels::WorkTotal& into, const kernels::WorkTotal& w) {
  add_to(into.count, w.count);
  add_to(into.bytes, w.bytes);
  add_to(into.ns, w.ns);
}

}  // namespace

void KernelAggregator::add(const KernelWindow& w) {
  Process& p = by_process_[{w.gpu, w.pid}];
  KernelProcessTotal& s = p.sum;
  // The newest window (by end; the later one of a tie) names the process and its pod.
  if (s.windows == 0 || w.end_unix_ns >= s.end_unix_ns) {
    s.uid = w.uid;
    s.device = w.device;
    s.process = w.process;
    s.kube = w.kube;
    s.end_unix_ns = w.end_unix_ns;
  }
  if (s.windows == 0 || w.start_unix_ns < s.start_unix_ns) {
    s.start_unix_ns = w.start_unix_ns;
  }
  s.gpu = w.gpu;
  s.pid = w.pid;
  ++s.windows;
  add_to(s.busy_ns, w.busy_ns);
  add_to(s.idle_ns, w.idle_ns);
  for (const auto& k : w.top) {
    auto it = p.kernels.find(std::string_view(k.name));
    if (it == p.kernels.end()) it = p.kernels.emplace(k.name, Merged{}).first;
    add_to(it->second.launches, k.launches);
    add_to(it->second.ns, k.ns);
    add_to(s.kernel_ns, k.ns);
  }
  add_to(s.other_launches, w.other_launches);
  add_to(s.other_ns, w.other_ns);
  add_to(s.kernel_ns, w.other_ns);
  add_work(s.collectives, w.collectives);
  add_work(s.copies, w.copies);
  add_work(s.memsets, w.memsets);
  add_to(s.cupti_dropped, w.cupti_dropped);
  add_to(s.summaries_dropped, w.summaries_dropped);
}

std::vector<KernelProcessTotal> KernelAggregator::result() const {
  std::vector<KernelProcessTotal> out;
  out.reserve(by_process_.size());
  for (const auto& [key, p] : by_process_) {
    KernelProcessTotal s = p.sum;
    std::vector<const std::pair<const std::string, Merged>*> ranked;
    ranked.reserve(p.kernels.size());
    for (const auto& entry : p.kernels) ranked.push_back(&entry);
    // Longest first; equal times by name, so that the answer does not depend on hashing.
    std::sort(ranked.begin(), ranked.end(), [](const auto* a, const auto* b) {
      return a->second.ns != b->second.ns ? a->second.ns > b->second.ns : a->first < b->first;
    });
    const std::size_t named = std::min(ranked.size(), top_);
    s.top.reserve(named);
    for (std::size_t i = 0; i < named; ++i) {
      s.top.push_back({ranked[i]->first, ranked[i]->second.launches, ranked[i]->second.ns});
    }
    for (std::size_t i = named; i < ranked.size(); ++i) {
      add_to(s.other_launches, ranked[i]->second.launches);
      add_to(s.other_ns, ranked[i]->second.ns);
    }
    s.other_named = ranked.size() - named;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.gpu != b.gpu) return a.gpu < b.gpu;
    return a.kernel_ns != b.kernel_ns ? a.kernel_ns > b.kernel_ns : a.pid < b.pid;
  });
  return out;
}

std::vector<KernelProcessTotal> total_kernels_by_process(const KernelStore& store,
                                                         const KernelQuery& q, std::size_t top) {
  KernelAggregator aggregator(top);
  store.for_each(q, [&aggregator](const KernelWindow& w) { aggregator.add(w); });
  return aggregator.result();
}

}  // namespace gpulens::agent

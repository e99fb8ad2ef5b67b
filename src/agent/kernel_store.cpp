// SPDX-License-Identifier: Apache-2.0
#include "agent/kernel_store.hpp"

#include <algorithm>

namespace gpulens::agent {
namespace {

bool listed(const std::vector<int>& gpus, int gpu) {
  return gpus.empty() || std::find(gpus.begin(), gpus.end(), gpu) != gpus.end();
}

bool listed(const std::vector<std::uint32_t>& pids, std::uint32_t pid) {
  return pids.empty() || std::find(pids.begin(), pids.end(), pid) != pids.end();
}

// The window overlaps [from, to] and is of a wanted process (its GPU is checked per ring).
bool wanted(const KernelQuery& q, const KernelWindow& w) {
  const double start = static_cast<double>(w.start_unix_ns) / kNsPerS;
  const double end = static_cast<double>(w.end_unix_ns) / kNsPerS;
  return end >= q.from && start <= q.to && listed(q.pids, w.pid);
}

}  // namespace

KernelStore::KernelStore(std::size_t windows_per_gpu)
    : per_gpu_(std::max<std::size_t>(windows_per_gpu, 1)) {}

void KernelStore::add(KernelWindow w) {
  std::lock_guard lock(mutex_);
  Ring& ring = by_gpu_[w.gpu];
  if (ring.windows.size() >= per_gpu_) {
    // The process holding the most windows gives up its oldest; among equals,
    // the one whose window is oldest (with one process: the ring's front).
    std::uint32_t most = ring.windows.front().pid;
    std::size_t most_n = ring.per_pid.at(most);
    for (const auto& [pid, n] : ring.per_pid) {
      if (n > most_n) {
        most = pid;
        most_n = n;
      }
    }
    const auto victim = std::find_if(ring.windows.begin(), ring.windows.end(),
                                     [most](const KernelWindow& k) { return k.pid == most; });
    if (--ring.per_pid[most] == 0) ring.per_pid.erase(most);
    ring.windows.erase(victim);
  }
  ++ring.per_pid[w.pid];
  ring.windows.push_back(std::move(w));
}

void KernelStore::for_each(const KernelQuery& q,
                           const std::function<void(const KernelWindow&)>& visit) const {
  std::lock_guard lock(mutex_);
  for (const auto& [gpu, ring] : by_gpu_) {
    if (!listed(q.gpus, gpu)) continue;
    for (const auto& w : ring.windows) {
      if (wanted(q, w)) visit(w);
    }
  }
}

KernelQueryResult KernelStore::query(const KernelQuery& q) const {
  KernelQueryResult r;
  if (q.limit == 0) return r;
  // Time order: start, then GPU, then pid. `newer` as the heap's "less" keeps the
  // oldest of the kept windows at the heap's front, to be replaced by a newer one.
  const auto newer = [](const KernelWindow* a, const KernelWindow* b) {
    if (a->start_unix_ns != b->start_unix_ns) return a->start_unix_ns > b->start_unix_ns;
    return a->gpu != b->gpu ? a->gpu > b->gpu : a->pid > b->pid;
  };
  std::vector<const KernelWindow*> kept;
  kept.reserve(std::min<std::size_t>(q.limit, 1024));
  std::lock_guard lock(mutex_);
  for (const auto& [gpu, ring] : by_gpu_) {
    if (!listed(q.gpus, gpu)) continue;
    for (const auto& w : ring.windows) {
      if (!wanted(q, w)) continue;
      if (kept.size() < q.limit) {
        kept.push_back(&w);
        std::push_heap(kept.begin(), kept.end(), newer);
      } else {
        r.truncated = true;
        if (!newer(&w, kept.front())) continue;
        std::pop_heap(kept.begin(), kept.end(), newer);
        kept.back() = &w;
        std::push_heap(kept.begin(), kept.end(), newer);
      }
    }
  }
  std::sort_heap(kept.begin(), kept.end(), newer);  // newest first
  // The newest first, until the answer's bytes are spent (always at least one).
  std::size_t bytes = 0, n = 0;
  for (; n < kept.size(); ++n) {
    bytes += window_bytes(*kept[n]);
    if (n > 0 && bytes > kMaxKernelAnswerBytes) break;
  }
  if (n < kept.size()) r.truncated = true;
  r.windows.reserve(n);
  for (std::size_t i = n; i-- > 0;) r.windows.push_back(*kept[i]);  // oldest first
  return r;
}

std::vector<KernelWindow> KernelStore::latest(double since_unix_s) const {
  std::map<std::pair<int, std::uint32_t>, const KernelWindow*> newest;
  std::lock_guard lock(mutex_);
  for (const auto& [gpu, ring] : by_gpu_) {
    for (const auto& w : ring.windows) {
      if (static_cast<double>(w.end_unix_ns) / kNsPerS < since_unix_s) continue;
      const KernelWindow*& slot = newest[{gpu, w.pid}];
      if (slot == nullptr || w.end_unix_ns >= slot->end_unix_ns) slot = &w;
    }
  }
  std::vector<KernelWindow> out;
  out.reserve(newest.size());
  for (const auto& [key, w] : newest) out.push_back(*w);
  return out;
}

std::size_t KernelStore::size() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [gpu, ring] : by_gpu_) n += ring.windows.size();
  return n;
}

// A string's bytes outside the object: none while it fits the small-string buffer.
std::size_t heap_bytes(const std::string& s) {
  return s.capacity() > 15 ? s.capacity() + 1 : 0;
}

std::size_t window_bytes(const KernelWindow& w) {
  std::size_t n = sizeof(KernelWindow) + heap_bytes(w.process) + heap_bytes(w.kube.namespace_name) +
                  heap_bytes(w.kube.pod) + heap_bytes(w.kube.container) +
                  w.top.capacity() * sizeof(kernels::KernelTime);
  for (const auto& k : w.top) n += heap_bytes(k.name);
  return n;
}

std::size_t KernelStore::bytes() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [gpu, ring] : by_gpu_) {
    for (const auto& w : ring.windows) n += window_bytes(w);
  }
  return n;
}

}  // namespace gpulens::agent

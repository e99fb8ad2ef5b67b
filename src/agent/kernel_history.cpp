// SPDX-License-Identifier: Apache-2.0
#include "agent/kernel_history.hpp"

#include "agent/log.hpp"

namespace gpulens::agent {
namespace {

store::StoredWorkTotal to_stored(const kernels::WorkTotal& t) {
  return {t.count, t.bytes, t.ns};
}
kernels::WorkTotal from_stored(const store::StoredWorkTotal& t) {
  return {t.count, t.bytes, t.ns};
}

}  // namespace

store::StoredKernelWindow to_stored(const KernelWindow& w) {
  store::StoredKernelWindow s;
  s.gpu = w.gpu;
  s.device = w.device;
  s.pid = w.pid;
  s.uid = w.uid;
  s.process = w.process;
  s.kube_namespace = w.kube.namespace_name;
  s.kube_pod = w.kube.pod;
  s.kube_container = w.kube.container;
  s.start_unix_ns = w.start_unix_ns;
  s.end_unix_ns = w.end_unix_ns;
  s.window = w.window;
  s.busy_ns = w.busy_ns;
  s.idle_ns = w.idle_ns;
  s.top.reserve(w.top.size());
  for (const auto& k : w.top) s.top.push_back({k.name, k.launches, k.ns});
  s.other_kernels = w.other_kernels;
  s.other_launches = w.other_launches;
  s.other_ns = w.other_ns;
  s.collectives = to_stored(w.collectives);
  s.copies = to_stored(w.copies);
  s.memsets = to_stored(w.memsets);
  s.cupti_dropped = w.cupti_dropped;
  s.summaries_dropped = w.summaries_dropped;
  return s;
}

KernelWindow from_stored(store::StoredKernelWindow s) {
  KernelWindow w;
  w.gpu = s.gpu;
  w.device = s.device;
  w.pid = s.pid;
  w.uid = s.uid;
  w.process = std::move(s.process);
  w.kube.namespace_name = std::move(s.kube_namespace);
  w.kube.pod = std::move(s.kube_pod);
  w.kube.container = std::move(s.kube_container);
  w.start_unix_ns = s.start_unix_ns;
  w.end_unix_ns = s.end_unix_ns;
  w.window = s.window;
  w.busy_ns = s.busy_ns;
  w.idle_ns = s.idle_ns;
  w.top.reserve(s.top.size());
  for (auto& k : s.top) w.top.push_back({std::move(k.name), k.launches, k.ns});
  w.other_kernels = s.other_kernels;
  w.other_launches = s.other_launches;
  w.other_ns = s.other_ns;
  w.collectives = from_stored(s.collectives);
  w.copies = from_stored(s.copies);
  w.memsets = from_stored(s.memsets);
  w.cupti_dropped = s.cupti_dropped;
  w.summaries_dropped = s.summaries_dropped;
  return w;
}

void load_kernel_history(const store::StoreOptions& options, KernelStore& store,
                         KernelHistoryCounts& counts, const std::vector<int>& gpus) {
  counts.enabled = !options.path.empty();
  if (!counts.enabled) return;
  auto history = store::HistoryStore::open(options);
  if (!history) {
    log_warning("kernel windows not read back from the history: {}", history.error().message);
    return;
  }
  auto loaded = store::read_newest_kernel_windows(history->db(), store.windows_per_gpu(), gpus);
  if (!loaded) {
    log_warning("kernel windows not read back from {}: {}", options.path, loaded.error().message);
    return;
  }
  if (loaded->skipped > 0) {
    log_warning("{} stored kernel window(s) in {} skipped as corrupt or oversized (the first: {})",
                loaded->skipped, options.path, loaded->first_problem);
  }
  counts.skipped += loaded->skipped;
  counts.loaded += loaded->windows.size();
  for (auto& w : loaded->windows) store.add(from_stored(std::move(w)));
  if (!loaded->windows.empty()) {
    log_info("kernel windows: {} read back from {}", loaded->windows.size(), options.path);
  }
}

}  // namespace gpulens::agent

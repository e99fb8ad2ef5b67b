// SPDX-License-Identifier: Apache-2.0
#include "agent/kernel_history.hpp"

#include "agent/log.hpp"

namespace gpulens::agent {
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
  for (auto& w : loaded->windows) store.add(std::move(w));
  if (!loaded->windows.empty()) {
    log_info("kernel windows: {} read back from {}", loaded->windows.size(), options.path);
  }
}

}  // namespace gpulens::agent

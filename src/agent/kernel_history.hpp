// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel windows in the agent's SQLite history (docs/kernels-agent.md): each
// window the receiver stores is also queued to the history writer (never waiting
// on SQLite; a full queue drops and counts it), and on start the newest windows
// of each GPU are read back into the KernelStore, so /api/v1/kernels answers
// across a restart. The ring and the history hold the same type (KernelWindow,
// kernels/record/window.hpp): nothing is converted on the way.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/kernel_store.hpp"
#include "store/history_store.hpp"
#include "store/kernel_windows.hpp"

namespace gpulens::agent {

// What the history did with kernel windows, for /api/v1/health and /metrics.
struct KernelHistoryCounts {
  bool enabled = false;       // a history file is kept
  std::uint64_t loaded = 0;   // windows read back on start
  std::uint64_t skipped = 0;  // stored rows that were corrupt or oversized, not loaded
  std::uint64_t written = 0;  // windows committed to the file
  std::uint64_t dropped = 0;  // windows never written: the writer's queue was full
};

// Reads the newest windows of each GPU (up to the ring's size) from the history
// at options.path into `store`, oldest first. A file that cannot be opened is
// logged and left to the writer's own retries: the agent serves without them. A
// corrupt row is skipped, logged once with the count, and counted in `counts`.
// Only the windows of `gpus` (the agent's GPUs) are read: the work is bounded
// by the node, not by the file.
void load_kernel_history(const store::StoreOptions& options, KernelStore& store,
                         KernelHistoryCounts& counts, const std::vector<int>& gpus);

}  // namespace gpulens::agent

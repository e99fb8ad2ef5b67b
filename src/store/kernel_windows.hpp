// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel windows jobs sent the agent (docs/kernels-agent.md), kept in the
// history (tables kernel_windows and kernel_names) so that /api/v1/kernels answers
// across a restart. The row type is the store's own: the agent converts its
// KernelWindow at its boundary (agent/kernel_history.*), as store may not see the
// agent. Rows are read back as untrusted: a corrupt or oversized one is skipped
// and counted, never a crash.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "store/sqlite_db.hpp"

namespace gpulens::store {

// What a row may hold when read back; the receiver's own bounds
// (kernels/kernel_summary.hpp: 32 kernels, names of 256 bytes) with room to spare
// for nothing else, so a row past them was not written by gpulens.
inline constexpr std::size_t kMaxStoredKernels = 32;
inline constexpr std::size_t kMaxStoredKernelName = 256;
inline constexpr std::size_t kMaxStoredText = 256;  // process, namespace, pod, container

struct StoredKernelTime {
  std::string name;
  std::uint64_t launches = 0, ns = 0;
  bool operator==(const StoredKernelTime&) const = default;
};

struct StoredWorkTotal {
  std::uint64_t count = 0, bytes = 0, ns = 0;
  bool operator==(const StoredWorkTotal&) const = default;
};

// One process's window on one GPU, every field of the agent's KernelWindow.
struct StoredKernelWindow {
  int gpu = 0;
  std::uint32_t device = 0, pid = 0, uid = 0;
  std::string process;
  std::string kube_namespace, kube_pod, kube_container;
  std::int64_t start_unix_ns = 0, end_unix_ns = 0;
  bool window = true;
  std::uint64_t busy_ns = 0, idle_ns = 0;
  std::vector<StoredKernelTime> top;
  std::uint64_t other_kernels = 0, other_launches = 0, other_ns = 0;
  StoredWorkTotal collectives, copies, memsets;
  std::uint64_t cupti_dropped = 0, summaries_dropped = 0;
  bool operator==(const StoredKernelWindow&) const = default;
};

// Writes `windows` (in the caller's transaction). A window with the same end,
// GPU and pid as a stored one replaces it; one of an implausible time, or past
// the bounds above, is not stored. `kept` (when given) is set to the windows that
// added a row: neither skipped nor replacing one, so that a count of windows
// written is a count of rows.
Status write_kernel_windows(Database& db, const std::vector<StoredKernelWindow>& windows,
                            std::size_t* kept = nullptr);

// Drops the windows that ended before `limit_ms` (Unix ms) and the names no
// window still uses.
Status expire_kernel_windows(Database& db, std::int64_t limit_ms);

// The end (Unix ms) of the newest and of the oldest stored window; nullopt when none.
Result<std::optional<std::int64_t>> newest_kernel_window_ms(Database& db);
Result<std::optional<std::int64_t>> oldest_kernel_window_ms(Database& db);

struct LoadedKernelWindows {
  std::vector<StoredKernelWindow> windows;  // oldest first
  std::size_t skipped = 0;                  // rows that were corrupt or oversized
  std::string first_problem;                // why the first skipped one was
};

// The newest `per_gpu` windows of each GPU in `gpus` (the agent's own), the
// agent's ring after a restart: the work is bounded by the agent's GPUs, never by
// what a file holds (a corrupt one with 60,001 GPUs kept the agent from serving
// for minutes). Rows whose `gpu` is not an index (text, negative, past 65535)
// are counted as skipped; those of GPUs the agent does not have stay unread.
Result<LoadedKernelWindows> read_newest_kernel_windows(Database& db, std::size_t per_gpu,
                                                       const std::vector<int>& gpus);

}  // namespace gpulens::store

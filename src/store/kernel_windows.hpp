// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel windows jobs sent the agent (docs/kernels-agent.md), kept in the
// history (tables kernel_windows and kernel_names) so that /api/v1/kernels answers
// across a restart. A row is a kernels::KernelWindow (kernels/record/window.hpp),
// the type the agent's ring and its API hold too. Rows are read back as untrusted: a corrupt or
// oversized one is skipped and counted, never a crash.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "kernels/record/window.hpp"
#include "store/sqlite_db.hpp"

namespace gpulens::store {

// What a row may hold when read back; the receiver's own bounds
// (kernels/record/summary_datagram.hpp: 32 kernels, names of 256 bytes) with room to spare
// for nothing else, so a row past them was not written by gpulens.
inline constexpr std::size_t kMaxStoredKernels = 32;
inline constexpr std::size_t kMaxStoredKernelName = 256;
inline constexpr std::size_t kMaxStoredText = 256;  // process, namespace, pod, container

// Writes `windows` (in the caller's transaction). A window with the same end,
// GPU and pid as a stored one replaces it; one of an implausible time, or past
// the bounds above, is not stored. `kept` (when given) is set to the windows that
// added a row: neither skipped nor replacing one, so that a count of windows
// written is a count of rows.
Status write_kernel_windows(Database& db, const std::vector<kernels::KernelWindow>& windows,
                            std::size_t* kept = nullptr);

// Drops the windows that ended before `limit_ms` (Unix ms) and the names no
// window still uses.
Status expire_kernel_windows(Database& db, std::int64_t limit_ms);

// The end (Unix ms) of the newest and of the oldest stored window; nullopt when none.
Result<std::optional<std::int64_t>> newest_kernel_window_ms(Database& db);
Result<std::optional<std::int64_t>> oldest_kernel_window_ms(Database& db);

struct LoadedKernelWindows {
  std::vector<kernels::KernelWindow> windows;  // oldest first
  std::size_t skipped = 0;                     // rows that were corrupt or oversized
  std::string first_problem;                   // why the first skipped one was
};

// The newest `per_gpu` windows of each GPU in `gpus` (the agent's own), the
// agent's ring after a restart: the work is bounded by the agent's GPUs, never by
// what a file holds (a corrupt one with 60,001 GPUs kept the agent from serving
// for minutes). Rows whose `gpu` is not an index (text, negative, past 65535)
// are counted as skipped; those of GPUs the agent does not have stay unread.
Result<LoadedKernelWindows> read_newest_kernel_windows(Database& db, std::size_t per_gpu,
                                                       const std::vector<int>& gpus);

}  // namespace gpulens::store

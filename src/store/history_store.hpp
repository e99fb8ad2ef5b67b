// SPDX-License-Identifier: Apache-2.0
#pragma once
// The agent's history on disk: SQLite in WAL mode, raw samples for a couple of
// days, one-minute rollups for months, alert events, all within a size bound.
// Crash safety comes from SQLite: every batch is one transaction, and in WAL mode
// a process killed mid-write leaves the file at the last committed batch.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/sample.hpp"
#include "diagnosis/alert_tracker.hpp"
#include "store/kernel_windows.hpp"
#include "store/pod_uses.hpp"
#include "store/rollup.hpp"
#include "store/schema.hpp"
#include "store/slurm_jobs.hpp"
#include "store/sqlite_db.hpp"

namespace gpulens::store {

struct StoreOptions {
  std::string path;
  double raw_retention_s = 48 * 3600.0;
  double rollup_retention_s = 90 * 86400.0;
  // The file never grows past this: old raw samples, then old rollups, are
  // dropped first (and SQLite refuses writes beyond it as a last resort).
  std::int64_t max_bytes = std::int64_t{2} << 30;
};

struct StoreStats {
  std::int64_t file_bytes = 0;  // database file, without the WAL
  std::int64_t used_bytes = 0;  // pages holding data (file less free pages)
  std::int64_t wal_bytes = 0;
  std::optional<double> newest_t;
};

// Opens (creating 0600) the history file at `path` before SQLite does: refuses a
// symbolic link, a file of another user and -wal/-shm files that are either,
// and takes group/other access away from an existing file.
Status claim_history_file(const std::string& path);

class HistoryStore {
 public:
  // Opens or creates the file, migrates the schema and sets WAL mode.
  static Result<HistoryStore> open(const StoreOptions& options);

  // One batch, one transaction: samples (a repeated (gpu, t) replaces the old
  // row, so replaying a trace twice does not duplicate it), alert events, and
  // the Slurm jobs seen on the GPUs (each row's span grows; store/slurm_jobs.hpp)
  // and the kernel windows jobs sent (store/kernel_windows.hpp; `kernel_windows_kept`:
  // how many of them added a row, set when the batch commits).
  Status write(const std::vector<StoredSample>& samples,
               const std::vector<diagnosis::AlertEvent>& events,
               const std::vector<SlurmJobUse>& slurm = {},
               const std::vector<kernels::KernelWindow>& kernel_windows = {},
               std::size_t* kernel_windows_kept = nullptr);
  // Pods' holdings (kube_pods), in a transaction of their own.
  Status write_pods(const std::vector<PodUse>& pods);
  Status write_devices(const TraceHeader& header);
  // Rolls up the minutes that closed since the last call (a minute closes when a
  // sample of a later minute arrives; close_all also closes the newest one).
  Status roll_up_closed(bool close_all = false);
  // Drops rows past their retention and enforces max_bytes; returns the space to
  // the file system. `make_room`: a write just failed as full, free more.
  Status enforce_limits(bool make_room = false);
  Status checkpoint();
  StoreStats stats();
  const StoreOptions& options() const { return options_; }
  const ColumnMap& columns() const { return columns_; }
  Database& db() { return db_; }

 private:
  HistoryStore(Database db, StoreOptions options, ColumnMap columns);
  Status prepare_statements();
  Status seed_dirty_minutes();
  Status delete_before(const char* table, const char* column, std::int64_t limit);
  Result<bool> drop_oldest(const char* table, const char* column, std::int64_t span);
  Status expire_kernel_history();
  Result<bool> drop_oldest_kernel_windows();
  Result<std::vector<StoredSample>> read_raw(std::int64_t from_ms, std::int64_t to_ms);
  Status write_rollups(const std::vector<RollupRow>& rows);
  std::int64_t used_bytes();

  Database db_;
  StoreOptions options_;
  ColumnMap columns_;
  Statement insert_sample_;
  Statement insert_event_;
  std::optional<double> newest_t_;
  std::set<std::int64_t> dirty_minutes_;  // minutes with raw rows not rolled up yet
};

// The value stored for `v` at `scale` and back; nullopt (stored as NULL) when
// v * scale is not finite or does not fit an int64: never a wrapped number.
std::optional<std::int64_t> to_stored(double v, double scale);
double from_stored(std::int64_t v, double scale);

}  // namespace gpulens::store

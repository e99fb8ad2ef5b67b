// SPDX-License-Identifier: Apache-2.0
#pragma once
// The history database's schema: numbered migrations (PRAGMA user_version) for
// the tables, then one idempotent step that gives every metric of the metric
// table and every diagnosis state its columns, so that adding a metric to
// core/metric.cpp needs no hand-written migration.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.hpp"
#include "core/result.hpp"
#include "store/sqlite_db.hpp"

namespace gpulens::store {

// The newest schema this build writes; a file from a newer gpulens is refused.
inline constexpr int kSchemaVersion = 4;

// Values are stored as integers (compact varints) in units of 1/scale: x100 for
// ratios, watts and bandwidths, x1 for counters, clocks and bitmasks. The scale
// of each column is kept in the file (metric_columns), so a later change of the
// default never misreads old rows.
double default_scale(Metric m);

// Which columns exist and at what scale; read back from the file after migrating.
struct ColumnMap {
  std::array<std::optional<double>, kMetricCount> scale;  // nullopt: no column
  std::map<std::string, int> state_codes;                 // state id -> code in samples.state
  std::map<int, std::string> state_ids;                   // code -> state id
};

// The file's history schema version (PRAGMA user_version): 0 for a file no
// gpulens has written to, 1..kSchemaVersion for one it can read. A negative
// version (no gpulens writes one) or a newer one is an error naming the file.
Result<std::int64_t> schema_version(Database& db);

// The numbered migrations: element N-1 takes a file at user_version N-1 to N.
// Exposed so that a test can build a file of an earlier version.
const std::vector<std::string_view>& migrations();

// Creates or upgrades the schema and returns the column map.
Result<ColumnMap> migrate(Database& db);
// Reads the column map of an already-migrated file (read-only connections).
Result<ColumnMap> read_column_map(Database& db);

// Rollup column names ("sm_active_mean") and state share columns ("state_idle").
std::string rollup_column(Metric m, const char* stat);
// " AND gpu IN (0,2)" for queries on samples and rollup_1m; empty for all GPUs.
std::string gpu_filter_clause(const std::vector<int>& gpus);
std::string state_column(const std::string& state_id);

}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#include "store/schema.hpp"

#include <fmt/format.h>

#include <functional>
#include <set>
#include <vector>

#include "diagnosis/state.hpp"

namespace gpulens::store {

// Migration N takes a file at user_version N-1 to N. Never edit a released
// step: add a new one, so files written by every earlier version upgrade.
const std::vector<std::string_view>& migrations() {
  static const std::vector<std::string_view> steps = {
      // 1: the first schema.
      R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE metric_columns (key TEXT PRIMARY KEY, scale REAL NOT NULL);
CREATE TABLE state_names (code INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);
CREATE TABLE devices (
  gpu INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL DEFAULT '',
  info TEXT NOT NULL DEFAULT '{}'
);
-- One row per GPU per tick; metric columns are added by ensure_columns().
-- Time leads the key: every query and every retention delete is a time range.
CREATE TABLE samples (
  t_ms INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  state INTEGER,
  throttled INTEGER,
  PRIMARY KEY (t_ms, gpu)
) WITHOUT ROWID;
-- One row per GPU per minute: sample count, state counts, mean/min/max columns.
CREATE TABLE rollup_1m (
  minute INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  n INTEGER NOT NULL,
  throttled INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (minute, gpu)
) WITHOUT ROWID;
CREATE TABLE alert_events (
  id INTEGER PRIMARY KEY,
  t REAL NOT NULL,
  gpu INTEGER NOT NULL,
  rule TEXT NOT NULL,
  kind TEXT NOT NULL,
  severity TEXT NOT NULL,
  since REAL NOT NULL,
  message TEXT NOT NULL,
  count INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX alert_events_t ON alert_events (t);
)sql",
      // 2: which Slurm job held which GPU when (store/slurm_jobs.hpp), for
      // `gpulens report --slurm-job`. A row per job, step and GPU; the index
      // serves retention and the list of the latest jobs.
      R"sql(
CREATE TABLE slurm_jobs (
  job INTEGER NOT NULL,
  step TEXT NOT NULL,
  gpu INTEGER NOT NULL,
  user TEXT NOT NULL DEFAULT '',
  account TEXT NOT NULL DEFAULT '',
  first_ms INTEGER NOT NULL,
  last_ms INTEGER NOT NULL,
  PRIMARY KEY (job, step, gpu)
) WITHOUT ROWID;
CREATE INDEX slurm_jobs_last ON slurm_jobs (last_ms);
)sql",
      // 3: the kernel windows jobs send the agent (store/kernel_windows.hpp), so
      // that /api/v1/kernels answers across a restart. A window names the same
      // ten kernels as the one before it for hours, and names run 60-250 bytes:
      // each name is stored once in kernel_names, and a window's top list is a
      // BLOB of varints (name id, launches, ns: about 10 bytes a kernel) rather
      // than a child table, whose rows would each repeat the window's key and
      // cost a b-tree cell. A name's last_ms (the end of the newest window that
      // used it) lets retention drop it with the last window that names it.
      // Time leads the window key, as for samples: retention is a time range.
      R"sql(
CREATE TABLE kernel_names (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  last_ms INTEGER NOT NULL
);
CREATE INDEX kernel_names_last ON kernel_names (last_ms);
CREATE TABLE kernel_windows (
  end_ns INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  device INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  process TEXT NOT NULL DEFAULT '',
  kube_namespace TEXT NOT NULL DEFAULT '',
  kube_pod TEXT NOT NULL DEFAULT '',
  kube_container TEXT NOT NULL DEFAULT '',
  is_window INTEGER NOT NULL,
  busy_ns INTEGER NOT NULL,
  idle_ns INTEGER NOT NULL,
  top BLOB NOT NULL,
  other_kernels INTEGER NOT NULL,
  other_launches INTEGER NOT NULL,
  other_ns INTEGER NOT NULL,
  coll_count INTEGER NOT NULL,
  coll_bytes INTEGER NOT NULL,
  coll_ns INTEGER NOT NULL,
  copy_count INTEGER NOT NULL,
  copy_bytes INTEGER NOT NULL,
  copy_ns INTEGER NOT NULL,
  memset_count INTEGER NOT NULL,
  memset_bytes INTEGER NOT NULL,
  memset_ns INTEGER NOT NULL,
  cupti_dropped INTEGER NOT NULL,
  summaries_dropped INTEGER NOT NULL,
  PRIMARY KEY (end_ns, gpu, pid)
) WITHOUT ROWID;
)sql",
      // 4: which Kubernetes pod held which GPU when (store/pod_uses.hpp), by the
      // kubelet's pod-resources API: a row per pod and GPU, so that a pod that
      // held a GPU idle is known after it is gone. The index serves retention
      // and the latest-first list.
      R"sql(
CREATE TABLE kube_pods (
  namespace TEXT NOT NULL,
  pod TEXT NOT NULL,
  gpu INTEGER NOT NULL,
  first_ms INTEGER NOT NULL,
  last_ms INTEGER NOT NULL,
  PRIMARY KEY (namespace, pod, gpu)
) WITHOUT ROWID;
CREATE INDEX kube_pods_last ON kube_pods (last_ms);
)sql",
  };
  return steps;
}

namespace {

Result<std::set<std::string>> table_columns(Database& db, const char* table) {
  std::set<std::string> names;
  auto stmt = db.prepare(fmt::format("PRAGMA table_info({})", table));
  if (!stmt) return stmt.error();
  const Status rows = stmt->for_each_row([&] { names.insert(stmt->column_text(1)); });
  if (!rows) return rows.error();
  return names;
}

Status add_column(Database& db, const char* table, const std::string& column,
                  const char* decl = "INTEGER") {
  return db.exec(
      fmt::format("ALTER TABLE {} ADD COLUMN {} {}", table, quote_identifier(column), decl));
}

// Gives every metric and state its columns; a no-op on an up-to-date file.
Status ensure_columns(Database& db) {
  const auto sample_cols = table_columns(db, "samples");
  if (!sample_cols) return sample_cols.error();
  const auto rollup_cols = table_columns(db, "rollup_1m");
  if (!rollup_cols) return rollup_cols.error();
  auto record = db.prepare("INSERT OR IGNORE INTO metric_columns (key, scale) VALUES (?, ?)");
  if (!record) return record.error();
  for (const auto& info : all_metrics()) {
    const std::string key(info.key);
    if (!sample_cols->contains(key)) {
      if (auto s = add_column(db, "samples", key); !s) return s;
    }
    for (const char* stat : {"mean", "min", "max"}) {
      const std::string col = rollup_column(info.id, stat);
      if (rollup_cols->contains(col)) continue;
      if (auto s = add_column(db, "rollup_1m", col); !s) return s;
    }
    record->bind(1, std::string_view(key));
    record->bind(2, default_scale(info.id));
    if (auto s = record->run(); !s) return s;
  }
  auto next_code = db.query_int("SELECT COALESCE(MAX(code), 0) + 1 FROM state_names");
  if (!next_code) return next_code.error();
  auto add_state = db.prepare("INSERT OR IGNORE INTO state_names (code, id) VALUES (?, ?)");
  if (!add_state) return add_state.error();
  std::int64_t code = *next_code;
  for (diagnosis::GpuState s : diagnosis::all_states()) {
    const std::string id(diagnosis::state_id(s));
    add_state->bind(1, code++);
    add_state->bind(2, std::string_view(id));
    if (auto st = add_state->run(); !st) return st;
    const std::string col = state_column(id);
    if (!rollup_cols->contains(col)) {
      if (auto st = add_column(db, "rollup_1m", col, "INTEGER NOT NULL DEFAULT 0"); !st) return st;
    }
  }
  return ok_status();
}

// A view with real values, for people who open the file with the sqlite3 shell.
Status create_view(Database& db, const ColumnMap& map) {
  std::string cols;
  for (const auto& info : all_metrics()) {
    const auto& scale = map.scale[index_of(info.id)];
    if (!scale) continue;
    const auto q = quote_identifier(info.key);
    cols += fmt::format(", {} / {} AS {}", q, *scale == 1 ? "1" : fmt::format("{:.1f}", *scale), q);
  }
  return db.exec(fmt::format(
      "DROP VIEW IF EXISTS samples_view; CREATE VIEW samples_view AS SELECT gpu, "
      "t_ms / 1000.0 AS t, (SELECT id FROM state_names WHERE code = samples.state) AS state, "
      "throttled{} FROM samples",
      cols));
}

}  // namespace

double default_scale(Metric m) {
  return metric_info(m).integral ? 1.0 : 100.0;
}

std::string rollup_column(Metric m, const char* stat) {
  return fmt::format("{}_{}", metric_info(m).key, stat);
}

std::string gpu_filter_clause(const std::vector<int>& gpus) {
  if (gpus.empty()) return {};
  std::string list;
  for (int g : gpus) list += fmt::format("{}{}", list.empty() ? "" : ",", g);
  return fmt::format(" AND gpu IN ({})", list);
}

std::string state_column(const std::string& state_id) {
  return "state_" + state_id;
}

Result<ColumnMap> read_column_map(Database& db) {
  ColumnMap map;
  auto cols = db.prepare("SELECT key, scale FROM metric_columns");
  if (!cols) return cols.error();
  const Status metric_rows = cols->for_each_row([&] {
    if (auto m = metric_from_key(cols->column_text(0))) {
      map.scale[index_of(*m)] = cols->column_double(1);
    }
  });
  if (!metric_rows) return metric_rows.error();
  auto states = db.prepare("SELECT code, id FROM state_names");
  if (!states) return states.error();
  const Status state_rows = states->for_each_row([&] {
    const int code = static_cast<int>(states->column_int(0));
    map.state_codes[states->column_text(1)] = code;
    map.state_ids[code] = states->column_text(1);
  });
  if (!state_rows) return state_rows.error();
  return map;
}

Result<std::int64_t> schema_version(Database& db) {
  auto version = db.query_int("PRAGMA user_version");
  if (!version) return version.error();
  if (*version < 0) {
    // Not ours: used as it was, its tables would be taken for gpulens' own.
    return Error{fmt::format(
        "{} has history schema version {}, which no gpulens writes: it is not a gpulens "
        "history file (or was altered); point --history at another file",
        db.path(), *version)};
  }
  if (*version > kSchemaVersion) {
    return Error{fmt::format(
        "{} was written by a newer gpulens (history schema {}; this gpulens knows up to {}): "
        "upgrade gpulens or point --history at another file",
        db.path(), *version, kSchemaVersion)};
  }
  return *version;
}

Result<ColumnMap> migrate(Database& db) {
  auto version = schema_version(db);
  if (!version) return version.error();
  const auto& steps = migrations();
  for (auto v = static_cast<std::size_t>(*version); v < steps.size(); ++v) {
    // Each step and its version bump commit together, so a crash mid-way
    // leaves the file at the previous version, never half-migrated.
    if (auto s = db.exec("BEGIN IMMEDIATE"); !s) return s.error();
    auto s = db.exec(steps[v]);
    if (s) s = db.exec(fmt::format("PRAGMA user_version = {}", v + 1));
    if (!s) {
      (void)db.exec("ROLLBACK");
      return Error{fmt::format("history schema migration to version {} failed: {}", v + 1,
                               s.error().message)};
    }
    if (auto c = db.exec("COMMIT"); !c) return c.error();
  }
  if (auto s = db.exec("BEGIN IMMEDIATE"); !s) return s.error();
  auto s = ensure_columns(db);
  if (!s) {
    (void)db.exec("ROLLBACK");
    return s.error();
  }
  auto map = read_column_map(db);
  if (!map) {
    (void)db.exec("ROLLBACK");
    return map.error();
  }
  if (auto v = create_view(db, *map); !v) {
    (void)db.exec("ROLLBACK");
    return v.error();
  }
  if (auto c = db.exec("COMMIT"); !c) return c.error();
  return map;
}

}  // namespace gpulens::store

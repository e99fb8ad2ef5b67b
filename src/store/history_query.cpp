// SPDX-License-Identifier: Apache-2.0
#include "store/history_query.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <utility>

namespace gpulens::store {
namespace {

// The bitmask has no mean; history offers the throttled share instead.
bool has_history(Metric m) {
  return m != Metric::ClockEventReasons;
}

struct Cell {
  double sum = 0;
  double weight = 0;
  std::optional<double> min, max;
};

struct Bucket {
  std::vector<Cell> cells;  // one per requested metric
  double throttled = 0;
  double n = 0;
};

using BucketMap = std::map<std::pair<int, std::int64_t>, Bucket>;

void merge_opt(std::optional<double>& into, std::optional<double> v, bool is_min) {
  if (!v) return;
  into = !into ? *v : is_min ? std::min(*into, *v) : std::max(*into, *v);
}

// Runs a grouped query whose columns are gpu, bucket, n, throttled, then four
// per metric (weighted sum, weight, min, max), adding into `buckets`.
Status accumulate(Database& db, const std::string& sql, std::int64_t from, std::int64_t to,
                  std::size_t metric_count, BucketMap& buckets) {
  auto stmt = db.prepare(sql);
  if (!stmt) return stmt.error();
  stmt->bind(1, from);
  stmt->bind(2, to);
  return stmt->for_each_row([&] {
    const auto key = std::make_pair(static_cast<int>(stmt->column_int(0)), stmt->column_int(1));
    Bucket& b = buckets[key];
    b.cells.resize(metric_count);
    b.n += stmt->column_double(2);
    b.throttled += stmt->column_double(3);
    for (std::size_t i = 0; i < metric_count; ++i) {
      const int c = 4 + static_cast<int>(i) * 4;
      Cell& cell = b.cells[i];
      cell.sum += stmt->column_double(c);
      cell.weight += stmt->column_double(c + 1);
      merge_opt(cell.min, stmt->column_opt_double(c + 2), true);
      merge_opt(cell.max, stmt->column_opt_double(c + 3), false);
    }
  });
}

}  // namespace

HistoryReader::HistoryReader(std::string path, std::chrono::milliseconds deadline)
    : path_(std::move(path)), deadline_(deadline) {}

namespace {

// The schema version and the column map: a file of no known version is refused
// rather than read as if it were gpulens' own.
Result<ColumnMap> read_schema(Database& db) {
  auto version = schema_version(db);
  if (!version) return version.error();
  if (*version == 0)
    return Error{
        fmt::format("{} is not a gpulens history database yet (no history schema)", db.path())};
  return read_column_map(db);
}

}  // namespace

Status HistoryReader::ensure_open() {
  // An immutable connection is a snapshot: each query looks again, so a file
  // that became writable (or got a writer) is read live from then on.
  if (db_.is_open() && !immutable_) return ok_status();
  db_ = Database();
  immutable_ = false;
  // Read-write without create, then query_only: a read-only open of a WAL file
  // fails whenever the -shm file is missing, which a fresh writer may not have made.
  Status first = ok_status();
  if (auto db = Database::open(path_, /*read_only=*/false, /*create=*/false); db) {
    auto columns = db->exec("PRAGMA query_only = 1")
                       ? read_schema(*db)
                       : Result<ColumnMap>(Error{"cannot make the connection read-only"});
    if (columns) {
      db_ = std::move(*db);
      columns_ = std::move(*columns);
      return ok_status();
    }
    first = columns.error();
  } else {
    first = db.error();
  }
  // A file this process may read but not write (nor write beside: -shm) fails
  // above even for a SELECT. With no -wal there is no live writer, and the
  // file is whole: it is read as immutable.
  std::error_code ec;
  if (std::filesystem::exists(path_ + "-wal", ec) || !std::filesystem::exists(path_, ec))
    return first;
  auto frozen = Database::open_immutable(path_);
  if (!frozen) return first;
  // Read as it is, the file's own fault (its version) is the one to report.
  auto columns = read_schema(*frozen);
  if (!columns) return columns.error();
  db_ = std::move(*frozen);
  columns_ = std::move(*columns);
  immutable_ = true;
  return ok_status();
}

Result<DataRange> HistoryReader::range() {
  std::lock_guard lock(mutex_);
  if (auto s = ensure_open(); !s) return s.error();
  return range_locked();
}

Result<DataRange> HistoryReader::range_locked() {
  return read_data_range(db_);
}

Result<DataRange> read_data_range(Database& db) {
  auto stmt = db.prepare(
      "SELECT (SELECT MIN(t_ms) FROM samples), (SELECT MAX(t_ms) FROM samples), "
      "(SELECT MIN(minute) FROM rollup_1m), (SELECT MAX(minute) FROM rollup_1m)");
  if (!stmt) return stmt.error();
  if (auto row = stmt->step(); !row) return row.error();
  DataRange r;
  auto seconds = [&](int c, double div) -> std::optional<double> {
    if (const auto v = stmt->column_opt_int(c)) return static_cast<double>(*v) / div;
    return std::nullopt;
  };
  r.raw_oldest = seconds(0, 1000);
  r.raw_newest = seconds(1, 1000);
  r.rollup_oldest = seconds(2, 1);
  r.rollup_newest = seconds(3, 1);
  return r;
}

double raw_split(const DataRange& range, double from, double to, double step) {
  double split = from;
  if (step >= 60) {
    if (range.rollup_newest) split = *range.rollup_newest + 60;
  } else if (range.raw_oldest) {
    split = *range.raw_oldest;
  } else {
    split = to;
  }
  return std::clamp(split, from, to);
}

namespace {

// The step used: the one asked for, at least 1 s and kMaxPointsPerSeries points at
// most, in whole milliseconds (the buckets' unit).
std::int64_t history_step_ms(const HistoryQuery& q) {
  const double span = std::max(0.0, q.to - q.from);
  return std::llround(std::max({q.step, 1.0, span / kMaxPointsPerSeries}) * 1000);
}

// The metrics asked for (all without a list) that the history keeps a column of.
std::vector<Metric> history_metrics(const HistoryQuery& q, const ColumnMap& columns) {
  std::vector<Metric> metrics;
  if (q.metrics.empty()) {
    for (const auto& info : all_metrics()) metrics.push_back(info.id);
  } else {
    metrics = q.metrics;
  }
  std::erase_if(metrics, [&](Metric m) { return !has_history(m) || !columns.scale[index_of(m)]; });
  return metrics;
}

// The four columns per metric that accumulate() reads, from raw samples and from
// one-minute rollups.
struct MetricColumns {
  std::string raw, rollup;
};

MetricColumns metric_columns(const std::vector<Metric>& metrics) {
  MetricColumns cols;
  for (Metric m : metrics) {
    const auto col = quote_identifier(metric_info(m).key);
    cols.raw += fmt::format(", TOTAL({0}), COUNT({0}), MIN({0}), MAX({0})", col);
    const auto mean = quote_identifier(rollup_column(m, "mean"));
    cols.rollup += fmt::format(
        ", TOTAL({0} * 1.0 * n), TOTAL(CASE WHEN {0} IS NULL THEN 0 ELSE n END), MIN({1}), "
        "MAX({2})",
        mean, quote_identifier(rollup_column(m, "min")), quote_identifier(rollup_column(m, "max")));
  }
  return cols;
}

// The buckets of [from, to): rollups answer the whole minutes before `split`, raw
// samples the rest. `source` says which answered: "rollup_1m", "raw" or both.
Status read_buckets(Database& db, const HistoryQuery& q, double split, std::int64_t step_ms,
                    const std::vector<Metric>& metrics, BucketMap& buckets, std::string& source) {
  const MetricColumns cols = metric_columns(metrics);
  const std::string filter = gpu_filter_clause(q.gpus);
  std::vector<std::string> sources;
  const auto from_minute = static_cast<std::int64_t>(std::floor(q.from / 60.0)) * 60;
  // Only whole minutes before the split: raw samples answer the rest.
  const auto to_minute = static_cast<std::int64_t>(std::floor(split / 60.0)) * 60;
  if (to_minute > from_minute) {
    const auto sql = fmt::format(
        "SELECT gpu, (minute * 1000) / {} AS b, TOTAL(n), TOTAL(throttled){} FROM rollup_1m "
        "WHERE minute >= ? AND minute < ?{} GROUP BY gpu, b",
        step_ms, cols.rollup, filter);
    const auto before = buckets.size();
    if (auto s = accumulate(db, sql, from_minute, to_minute, metrics.size(), buckets); !s)
      return s.error();
    if (buckets.size() > before) sources.push_back("rollup_1m");
  }
  if (split < q.to) {
    const auto sql = fmt::format(
        "SELECT gpu, t_ms / {} AS b, COUNT(*), TOTAL(throttled){} FROM samples "
        "WHERE t_ms >= ? AND t_ms < ?{} GROUP BY gpu, b",
        step_ms, cols.raw, filter);
    const auto before = buckets.size();
    if (auto s = accumulate(db, sql, std::llround(split * 1000), std::llround(q.to * 1000),
                            metrics.size(), buckets);
        !s)
      return s.error();
    if (buckets.size() > before || sources.empty()) sources.push_back("raw");
  }
  for (const auto& s : sources) source += (source.empty() ? "" : "+") + s;
  return ok_status();
}

// The buckets as one series per GPU (by GPU index): means, and with `min_max`
// the extremes, in each metric's unit.
std::vector<GpuSeries> series_of(const BucketMap& buckets, const std::vector<Metric>& metrics,
                                 const ColumnMap& columns, std::int64_t step_ms, bool min_max) {
  std::map<int, GpuSeries> by_gpu;
  for (const auto& [key, b] : buckets) {
    GpuSeries& series = by_gpu[key.first];
    if (series.metrics.empty()) {
      series.gpu = key.first;
      for (Metric m : metrics) series.metrics.push_back(MetricSeries{m, {}, {}, {}});
    }
    series.t.push_back(static_cast<double>(key.second * step_ms) / 1000.0);
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      const double scale = *columns.scale[index_of(metrics[i])];
      const Cell& c = b.cells[i];
      MetricSeries& ms = series.metrics[i];
      ms.mean.push_back(c.weight > 0 ? std::optional<double>(c.sum / c.weight / scale)
                                     : std::nullopt);
      if (min_max) {
        ms.min.push_back(c.min ? std::optional<double>(*c.min / scale) : std::nullopt);
        ms.max.push_back(c.max ? std::optional<double>(*c.max / scale) : std::nullopt);
      }
    }
  }
  std::vector<GpuSeries> out;
  for (auto& [gpu, series] : by_gpu) out.push_back(std::move(series));
  return out;
}

}  // namespace

Result<HistoryResult> HistoryReader::history(const HistoryQuery& q) {
  std::lock_guard lock(mutex_);
  if (auto s = ensure_open(); !s) return s.error();
  const Database::DeadlineScope deadline(db_, deadline_);

  HistoryResult out;
  out.from = q.from;
  out.to = q.to;
  const std::int64_t step_ms = history_step_ms(q);
  out.step = static_cast<double>(step_ms) / 1000.0;
  const std::vector<Metric> metrics = history_metrics(q, columns_);
  auto range = range_locked();
  if (!range) return range.error();
  const double split = raw_split(*range, q.from, q.to, out.step);
  BucketMap buckets;
  if (auto s = read_buckets(db_, q, split, step_ms, metrics, buckets, out.source); !s)
    return s.error();
  out.series = series_of(buckets, metrics, columns_, step_ms, q.min_max);
  return out;
}

Result<std::vector<PodUse>> HistoryReader::pods(double from, double to,
                                                const std::vector<int>& gpus, int limit) {
  std::lock_guard lock(mutex_);
  if (auto s = ensure_open(); !s) return s.error();
  return pod_uses_between(db_, from, to, gpus, static_cast<std::size_t>(std::max(limit, 0)));
}

Result<std::vector<StoredAlertEvent>> HistoryReader::alert_events(double from, double to,
                                                                  int limit) {
  std::lock_guard lock(mutex_);
  if (auto s = ensure_open(); !s) return s.error();
  auto stmt = db_.prepare(
      "SELECT t, gpu, rule, kind, severity, since, message, count FROM alert_events "
      "WHERE t >= ? AND t < ? ORDER BY t DESC, id DESC LIMIT ?");
  if (!stmt) return stmt.error();
  stmt->bind(1, from);
  stmt->bind(2, to);
  stmt->bind(3, std::int64_t{limit});
  std::vector<StoredAlertEvent> out;
  const Status rows = stmt->for_each_row([&] {
    StoredAlertEvent e;
    e.t = stmt->column_double(0);
    e.gpu = static_cast<int>(stmt->column_int(1));
    e.rule = stmt->column_text(2);
    e.kind = stmt->column_text(3);
    e.severity = stmt->column_text(4);
    e.since = stmt->column_double(5);
    e.message = stmt->column_text(6);
    e.count = static_cast<int>(stmt->column_int(7));
    out.push_back(std::move(e));
  });
  if (!rows) return rows.error();
  return out;
}

}  // namespace gpulens::store

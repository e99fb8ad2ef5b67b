// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading history back: metric series at a chosen step (from raw samples where
// they still exist, else from the one-minute rollups), the state timeline, and
// alert events. Used by the HTTP threads through their own connection.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/sample.hpp"
#include "store/pod_uses.hpp"
#include "store/schema.hpp"
#include "store/sqlite_db.hpp"

namespace gpulens::store {

struct HistoryQuery {
  double from = 0;  // Unix seconds, inclusive
  double to = 0;    // Unix seconds, exclusive
  double step = 60;
  std::vector<int> gpus;        // empty = all
  std::vector<Metric> metrics;  // empty = all
  bool min_max = false;         // also return each bucket's min and max
};

struct MetricSeries {
  Metric metric = Metric::GpuUtil;
  std::vector<std::optional<double>> mean;
  std::vector<std::optional<double>> min;  // empty unless asked for
  std::vector<std::optional<double>> max;
};

struct GpuSeries {
  int gpu = 0;
  std::vector<double> t;  // bucket starts, only buckets that hold data
  std::vector<MetricSeries> metrics;
};

struct HistoryResult {
  double from = 0;
  double to = 0;
  double step = 0;
  std::string source;  // "raw", "rollup_1m" or "raw+rollup_1m"
  std::vector<GpuSeries> series;
};

struct TimelineRun {
  int gpu = 0;
  double start = 0;
  double end = 0;
  std::string state;
  double throttled_share = 0;
};

struct TimelineResult {
  std::string source;
  std::vector<TimelineRun> runs;
};

struct StoredAlertEvent {
  double t = 0;
  int gpu = 0;
  std::string rule;
  std::string kind;
  std::string severity;
  double since = 0;
  std::string message;
  int count = 1;
};

struct DataRange {
  std::optional<double> raw_oldest, raw_newest, rollup_oldest, rollup_newest;
};

// What the file holds, read on an open connection (inside the caller's
// transaction, if any, so that it matches the rows read after it).
Result<DataRange> read_data_range(Database& db);

// Where raw samples take over from the one-minute rollups in a read of
// [from, to) at `step` seconds, clamped to [from, to]: steps of a minute or more
// read rollups up to the last rolled-up minute; shorter steps read raw samples,
// and rollups only before the oldest raw sample (dropped by retention).
double raw_split(const DataRange& range, double from, double to, double step);

// One read-only connection, serialised by a mutex. Every query runs under a
// deadline so that no request holds an HTTP thread for long.
class HistoryReader {
 public:
  explicit HistoryReader(std::string path,
                         std::chrono::milliseconds deadline = std::chrono::seconds(5));

  Result<HistoryResult> history(const HistoryQuery& query);
  Result<TimelineResult> timeline(double from, double to, const std::vector<int>& gpus);
  Result<std::vector<StoredAlertEvent>> alert_events(double from, double to, int limit);
  // The pods that held a GPU (kube_pods) at some time in [from, to], latest first;
  // `gpus` empty: every GPU.
  Result<std::vector<PodUse>> pods(double from, double to, const std::vector<int>& gpus, int limit);
  Result<DataRange> range();
  const std::string& path() const { return path_; }

 private:
  Status ensure_open();
  Result<DataRange> range_locked();

  std::string path_;
  std::chrono::milliseconds deadline_;
  std::mutex mutex_;
  Database db_;
  bool immutable_ = false;  // db_ reads a file it could not open the usual way
  ColumnMap columns_;
};

// Points a series may hold; a larger range gets a larger step.
inline constexpr double kMaxPointsPerSeries = 5000;

}  // namespace gpulens::store

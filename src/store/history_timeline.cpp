// SPDX-License-Identifier: Apache-2.0
// The state timeline: runs of one diagnosis state per GPU, from raw samples for
// short ranges and from the rollups' majority state per minute for long ones.
#include <fmt/format.h>

#include <cmath>

#include "store/history_query.hpp"

namespace gpulens::store {
namespace {

// Raw samples are read for ranges up to this long; beyond it, minutes.
constexpr double kRawTimelineMaxSpan = 6 * 3600.0;
// A silence longer than this ends a run (the agent was down, or the GPU silent).
constexpr double kRawGap = 10.0;
constexpr double kRollupGap = 120.0;
// Bound on the answer, whatever the range.
constexpr std::size_t kMaxRuns = 50000;

// Merges points into runs of one state. A point covers [t, t + span): raw
// samples end their interval at t (span 0), a minute row starts it (span 60).
struct RunBuilder {
  std::vector<TimelineRun>& runs;
  double gap;
  double span;
  double throttled_weight = 0;
  double weight = 0;
  double last_t = 0;

  void add(int gpu, double t, const std::string& state, double throttled, double w) {
    TimelineRun* cur = runs.empty() ? nullptr : &runs.back();
    const bool contiguous = cur != nullptr && cur->gpu == gpu && t - last_t <= gap;
    if (cur != nullptr && contiguous && cur->state == state) {
      cur->end = t + span;
    } else {
      // A run lasts until the next one starts when the points are contiguous.
      if (cur != nullptr && contiguous) cur->end = t;
      runs.push_back(TimelineRun{gpu, t, t + span, state, 0});
      throttled_weight = 0;
      weight = 0;
    }
    throttled_weight += throttled;
    weight += w;
    runs.back().throttled_share = weight > 0 ? throttled_weight / weight : 0;
    last_t = t;
  }
};

}  // namespace

Result<TimelineResult> HistoryReader::timeline(double from, double to,
                                               const std::vector<int>& gpus) {
  std::lock_guard lock(mutex_);
  if (auto s = ensure_open(); !s) return s.error();
  const Database::DeadlineScope deadline(db_, deadline_);
  auto range = range_locked();
  if (!range) return range.error();

  const std::string filter = gpu_filter_clause(gpus);

  TimelineResult out;
  // Raw samples answer short ranges, unless they were dropped from the range's
  // start while rollups still hold it.
  const bool rollups_reach_further =
      range->rollup_oldest && range->raw_oldest && *range->rollup_oldest < *range->raw_oldest - 60;
  const bool raw = to - from <= kRawTimelineMaxSpan && range->raw_oldest &&
                   (*range->raw_oldest <= from || !rollups_reach_further);
  if (raw) {
    out.source = "raw";
    auto stmt = db_.prepare(fmt::format(
        "SELECT gpu, t_ms, state, throttled FROM samples WHERE t_ms >= ? AND t_ms < ?{} "
        "ORDER BY gpu, t_ms",
        filter));
    if (!stmt) return stmt.error();
    stmt->bind(1, static_cast<std::int64_t>(std::llround(from * 1000)));
    stmt->bind(2, static_cast<std::int64_t>(std::llround(to * 1000)));
    RunBuilder builder{out.runs, kRawGap, 0};
    const Status rows = stmt->for_each_row([&] {
      if (out.runs.size() >= kMaxRuns) return false;
      std::string state = "unknown";
      if (const auto code = stmt->column_opt_int(2)) {
        if (auto it = columns_.state_ids.find(static_cast<int>(*code));
            it != columns_.state_ids.end())
          state = it->second;
      }
      builder.add(static_cast<int>(stmt->column_int(0)),
                  static_cast<double>(stmt->column_int(1)) / 1000.0, state,
                  static_cast<double>(stmt->column_int(3)), 1.0);
      return true;
    });
    if (!rows) return rows.error();
    return out;
  }

  out.source = "rollup_1m";
  std::string cols;
  std::vector<std::string> ids;
  for (const auto& [id, code] : columns_.state_codes) {
    cols += ", " + quote_identifier(state_column(id));
    ids.push_back(id);
  }
  auto stmt = db_.prepare(fmt::format(
      "SELECT gpu, minute, n, throttled{} FROM rollup_1m WHERE minute >= ? AND minute < ?{} "
      "ORDER BY gpu, minute",
      cols, filter));
  if (!stmt) return stmt.error();
  stmt->bind(1, static_cast<std::int64_t>(std::floor(from / 60.0)) * 60);
  stmt->bind(2, static_cast<std::int64_t>(std::ceil(to / 60.0)) * 60);
  RunBuilder builder{out.runs, kRollupGap, 60};
  const Status rows = stmt->for_each_row([&] {
    if (out.runs.size() >= kMaxRuns) return false;
    // The minute's majority state; "unknown" when no sample had a verdict.
    std::string state = "unknown";
    std::int64_t best = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto count = stmt->column_int(4 + static_cast<int>(i));
      if (count > best) {
        best = count;
        state = ids[i];
      }
    }
    const auto n = static_cast<double>(stmt->column_int(2));
    builder.add(static_cast<int>(stmt->column_int(0)), static_cast<double>(stmt->column_int(1)),
                state, static_cast<double>(stmt->column_int(3)), n);
    return true;
  });
  if (!rows) return rows.error();
  return out;
}

}  // namespace gpulens::store

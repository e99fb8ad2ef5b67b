// SPDX-License-Identifier: Apache-2.0
#pragma once
// The agent's history read back as a trace, so that `gpulens report --from --to`
// judges a time range of a node with the same code that judges a recording:
// the devices and host the agent stored, and one sample per GPU per tick from
// the raw samples, or, where retention already dropped those, one 60 s sample
// per rolled-up minute. Marks and process lists are not kept in history.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "core/trace_reader.hpp"
#include "store/history_query.hpp"
#include "store/history_time.hpp"
#include "store/schema.hpp"
#include "store/sqlite_db.hpp"

namespace gpulens::store {

// Raw samples a report reads at most (a day of 8 GPUs at 1 Hz is 691,200; each
// costs a few hundred bytes, twice over while the verdict is built). Beyond it
// the older part of the range is read from the minutes.
inline constexpr std::size_t kMaxRawSamples = 1'000'000;

struct HistoryTraceRequest {
  std::string path;
  double from = 0;        // Unix seconds, inclusive
  double to = 0;          // Unix seconds, exclusive
  std::vector<int> gpus;  // empty: every GPU the history holds
  std::size_t max_raw_samples = kMaxRawSamples;
  // Where the end of the range is read from rollups, the minute holding `to`
  // counts whole (a job's last minute); else only minutes before it.
  bool whole_last_minute = false;
};

struct HistoryTrace {
  // Notes on where the samples came from are in trace.warnings, which every
  // report form prints.
  Trace trace;
  DataRange held;                  // what the whole file holds
  std::string source;              // "raw", "rollup_1m" or "rollup_1m+raw"
  std::optional<double> raw_from;  // with rollups: where raw samples take over
  // Raw samples the range held when more than max_raw_samples (then minutes
  // stand in for the older ones).
  std::optional<std::int64_t> raw_capped_at;
  std::size_t raw_samples = 0;
  std::size_t rollup_samples = 0;
};

// A history file opened read-only, its columns and schema version.
struct OpenedHistory {
  Database db;
  ColumnMap columns;
  std::int64_t version = 0;
};

// Opens `path` read-only (the agent may be writing it: WAL readers never block
// it). Errors name the file and say what to do: no file (the agent writes it),
// a directory, unreadable, not a gpulens history.
Result<OpenedHistory> open_history_file(const std::string& path);

// The samples of `request` from an opened history, in the caller's read
// transaction; none is no error here.
Result<HistoryTrace> read_history_samples(OpenedHistory& history,
                                          const HistoryTraceRequest& request);
// "raw samples from ... to ... and 1-minute rollups from ... to ...": what the
// file holds, empty when nothing.
std::string describe_history_held(const DataRange& held);
// The trace's interval and the notes on where its samples came from; with no
// sample, an error with the range the file does hold.
Status finish_history_trace(HistoryTrace& trace, const HistoryTraceRequest& request);

// Opens `path` read-only (the agent may be writing it: WAL readers never block
// it) and reads [from, to) in one read transaction, so the rows are one
// consistent snapshot. Errors name the file and say what to do: no file (the
// agent writes it), unreadable, not a gpulens history, nothing in the range
// (with the range the file does hold), a GPU it does not hold.
Result<HistoryTrace> load_history_trace(const HistoryTraceRequest& request);

}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Formats ticks for `gpulens stream`: an aligned table (like nvidia-smi dmon, with
// the truth beside the classic number), CSV, or JSON lines.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/sample.hpp"

namespace gpulens::render {

enum class StreamFormat { Table, Csv, Json };

// Per-GPU annotations from the diagnosis engine, shown as the last columns.
struct StreamAnnotation {
  std::string state;                // stable id, e.g. "sm_underused"; empty when unknown
  std::vector<std::string> alerts;  // ids of firing alerts
};

struct StreamColumn {
  std::string name;   // what --metrics takes: "util", "sm", "pcie", ...
  std::string title;  // header line 1
  std::string unit;   // header line 2
  int width = 0;
  int priority = 0;  // lower survives longer when the terminal is narrow
};

const std::vector<StreamColumn>& stream_columns();
std::vector<std::string> default_stream_columns();

struct StreamFormatOptions {
  StreamFormat format = StreamFormat::Table;
  std::vector<std::string> columns;  // names; empty = defaults
  int max_width = 0;                 // 0 = unlimited; otherwise drop low-priority columns
  bool utc = false;                  // timestamps in UTC instead of local time
};

// When a terminal table repeats its header, as dmon does: once a screenful of
// rows has gone by since the last header, so that the column names are always on
// screen. `rows` is the terminal's height (0 when unknown: 24 is assumed).
class HeaderRepeat {
 public:
  HeaderRepeat(int rows, int header_lines);
  // Called before a tick's lines are printed; true when the header comes first.
  bool due(std::size_t tick_lines);

 private:
  std::size_t screen_;
  std::size_t since_header_ = 0;
};

class StreamFormatter {
 public:
  static Result<StreamFormatter> create(StreamFormatOptions options, const TraceHeader& header);
  // The header block (table: two lines, csv: one line, json: nothing).
  std::string header_text() const;
  // One line per sample (ending in '\n').
  std::string format(const Sample& sample, const StreamAnnotation* note) const;
  const std::vector<const StreamColumn*>& columns() const { return shown_; }

 private:
  std::string cell(const StreamColumn& column, const Sample& s, const StreamAnnotation* n) const;
  StreamFormatOptions options_;
  TraceHeader header_;
  int width(const StreamColumn& c) const;
  std::vector<const StreamColumn*> shown_;  // point into the static column table
  bool tenths_ = false;
};

}  // namespace gpulens::render

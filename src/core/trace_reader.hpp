// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reader for gpu-trace v1 (docs/trace-format.md): streaming, or the whole file.
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/result.hpp"
#include "core/sample.hpp"

namespace gpulens {

struct TraceReadOptions {
  // Skip malformed lines and count them instead of stopping at the first one.
  bool lenient = false;
  // Where the kernel records (lines with "x_kernels", docs/kernels.md) go as they
  // are read; unset, they are kept in kernel_records(). A long job's records are
  // summed as they come (kernels/view/record_gatherer.hpp) instead of held whole.
  std::function<void(const nlohmann::json&)> kernel_record_sink = nullptr;
};

using TraceEvent = std::variant<Sample, Mark>;

class TraceReader {
 public:
  static Result<TraceReader> open(const std::string& path, TraceReadOptions options = {});
  // Parses from a string (tests, stdin); `name` stands in for the file in messages.
  static Result<TraceReader> from_string(std::string text, std::string name,
                                         TraceReadOptions options = {});

  const TraceHeader& header() const { return header_; }
  // The next sample or mark; nullopt at the end of the file. An error names the
  // file and line. A truncated last line is not an error: it is skipped and
  // reported through warnings().
  Result<std::optional<TraceEvent>> next();
  const std::vector<std::string>& warnings() const { return warnings_; }
  std::size_t skipped_lines() const { return skipped_; }
  // Readings outside their physical range (core/value_ranges.hpp), dropped from
  // their samples; lines whose time is not a plausible Unix time, dropped whole.
  // Both are reported through warnings() at the end of the file.
  std::size_t out_of_range_readings() const { return out_of_range_; }
  std::size_t bad_time_lines() const { return bad_times_; }
  // Lines {"x_kernels": 1, ...} read so far (docs/kernels.md).
  const std::vector<nlohmann::json>& kernel_records() const { return kernel_records_; }
  // Lines {"x_launches": 1, ...}, one per process of a `gpulens run` (docs/kernels.md,
  // "Launch counts"); past kMaxLaunchRecordLines or kMaxLaunchRecordTotalBytes they
  // are counted, not kept.
  const std::vector<nlohmann::json>& launch_records() const { return launch_records_; }

  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;
  ~TraceReader();

 private:
  TraceReader() = default;
  static Result<TraceReader> start(std::unique_ptr<std::istream> in, std::string name,
                                   TraceReadOptions options);
  Result<std::optional<TraceEvent>> parse_line(const std::string& line, bool last_line);
  // Empty when the header describes `gpu`, else the reason the sample is refused.
  std::string check_gpu(int gpu) const;
  // A bad line: an error naming file and line, or (lenient) counted and skipped.
  Result<std::optional<TraceEvent>> skip_or_fail(const std::string& problem);
  // A kernel record line that cannot be read becomes a record saying so: true.
  bool refuse_kernel_record(const std::string& line, const std::string& problem);
  // A sample or mark at time `t` outside 1900..2200: dropped and counted.
  Result<std::optional<TraceEvent>> drop_for_time(double t);
  // The warnings for what drop_out_of_range() and drop_for_time() dropped, once.
  void report_dropped();
  std::unique_ptr<std::istream> in_;
  std::string name_;
  TraceReadOptions options_;
  TraceHeader header_;
  std::size_t line_no_ = 0;
  std::size_t skipped_ = 0;
  bool warned_non_finite_ = false;
  bool reported_skipped_ = false;
  std::size_t out_of_range_ = 0;
  std::string first_out_of_range_;
  std::size_t bad_times_ = 0;
  std::string first_bad_time_;
  bool reported_dropped_ = false;
  std::vector<std::string> warnings_;
  std::vector<nlohmann::json> kernel_records_;
  std::vector<nlohmann::json> launch_records_;
  std::size_t launch_records_dropped_ = 0;
  std::size_t launch_record_bytes_ = 0;  // of the lines kept
};

// A whole trace in memory, for offline commands (diagnose, report) and tests.
struct Trace {
  TraceHeader header;
  std::vector<Sample> samples;  // in file order (time order)
  std::vector<Mark> marks;
  std::vector<std::string> warnings;
  std::vector<nlohmann::json> kernel_records;  // `gpulens run --kernels` (docs/kernels.md)
  std::vector<nlohmann::json> launch_records;  // `gpulens run`'s launch counts
};

Result<Trace> read_trace(const std::string& path, TraceReadOptions options = {});
Result<Trace> read_trace_string(std::string text, std::string name, TraceReadOptions options = {});

// JSON <-> model, shared by the reader, the writer and the JSON outputs.
Result<TraceHeader> header_from_json(const nlohmann::json& j);
nlohmann::json header_to_json(const TraceHeader& header);
Result<Sample> sample_from_json(const nlohmann::json& j);
Mark mark_from_json(const nlohmann::json& j);
nlohmann::json mark_to_json(const Mark& mark);

}  // namespace gpulens

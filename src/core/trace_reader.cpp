// SPDX-License-Identifier: Apache-2.0
#include "core/trace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/input_limits.hpp"
#include "core/value_ranges.hpp"

namespace gpulens {

TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;
TraceReader::~TraceReader() = default;

Result<TraceReader> TraceReader::start(std::unique_ptr<std::istream> in, std::string name,
                                       TraceReadOptions options) {
  TraceReader reader;
  reader.in_ = std::move(in);
  reader.name_ = std::move(name);
  reader.options_ = options;
  std::string first;
  const LineRead read = read_line_bounded(*reader.in_, first);
  if (read == LineRead::End) {
    return Error{fmt::format("{}: empty (expected a gpu-trace header on line 1)", reader.name_)};
  }
  if (read == LineRead::TooLong) {
    return Error{
        fmt::format("{}:1: the header is longer than {} bytes", reader.name_, kMaxLineBytes)};
  }
  reader.line_no_ = 1;
  if (!first.empty() && first.back() == '\r') first.pop_back();
  const auto j = parse_json_bounded(first);
  if (!j) return Error{fmt::format("{}:1: the header is {}", reader.name_, j.error().message)};
  auto header = header_from_json(*j);
  if (!header) return Error{fmt::format("{}:1: {}", reader.name_, header.error().message)};
  reader.header_ = std::move(*header);
  return reader;
}

Result<TraceReader> TraceReader::open(const std::string& path, TraceReadOptions options) {
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) return Error{fmt::format("{}: cannot open: {}", path, std::strerror(errno))};
  return start(std::move(file), path, options);
}

Result<TraceReader> TraceReader::from_string(std::string text, std::string name,
                                             TraceReadOptions options) {
  return start(std::make_unique<std::istringstream>(std::move(text)), std::move(name), options);
}

namespace {

// Python's json module writes NaN and Infinity for values it could not compute.
// They are not JSON; reading them as null keeps the metric "not measured" (never
// 0) instead of rejecting the whole recording. Tokens inside strings are left alone.
bool replace_non_finite_tokens(std::string& line) {
  bool changed = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') {
      i = json_string_end(line, i);
      continue;
    }
    for (const std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (line.compare(i, token.size(), token) == 0) {
        line.replace(i, token.size(), "null");
        i += 3;
        changed = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace

Result<std::optional<TraceEvent>> TraceReader::parse_line(const std::string& line, bool last_line) {
  std::string problem;
  auto j = parse_json_bounded(line);
  if (!j && !json_nesting_exceeds(line)) {
    std::string patched = line;
    if (replace_non_finite_tokens(patched)) {
      j = parse_json_bounded(patched);
      if (j && !warned_non_finite_) {
        warned_non_finite_ = true;
        warnings_.push_back(
            fmt::format("{}:{}: NaN/Infinity read as not measured", name_, line_no_));
      }
    }
  }
  if (!j && refuse_kernel_record(line, j.error().message)) return std::optional<TraceEvent>{};
  if (!j) {
    if (last_line && !json_nesting_exceeds(line)) {
      // A recording cut off by a crash: keep everything before it.
      warnings_.push_back(fmt::format("{}:{}: truncated last line skipped", name_, line_no_));
      return std::optional<TraceEvent>{};
    }
    problem = j.error().message;
  } else if (!j->is_object()) {
    problem = "not a JSON object";
  } else if (j->contains("mark")) {
    if (!(*j)["mark"].is_string() || !j->contains("t") || !(*j)["t"].is_number()) {
      problem = "a mark needs a string \"mark\" and a numeric \"t\"";
    } else {
      Mark mark = mark_from_json(*j);
      if (!plausible_time(mark.t)) return drop_for_time(mark.t);
      return std::optional<TraceEvent>{std::move(mark)};
    }
  } else if (j->contains("x_launches")) {
    // A process's launch counts (docs/kernels.md, "Launch counts"), checked when read
    // (kernels/record/launch_record_read.hpp).
    if (keeps_launch_record(launch_records_.size(), launch_record_bytes_, line.size())) {
      launch_record_bytes_ += line.size();
      launch_records_.push_back(std::move(*j));
    } else if (launch_records_dropped_++ == 0) {
      warnings_.push_back(
          fmt::format("{}:{}: launch records past the first {} or {} MiB are not read", name_,
                      line_no_, kMaxLaunchRecordLines, kMaxLaunchRecordTotalBytes >> 20));
    }
    return std::optional<TraceEvent>{};
  } else if (j->contains("x_kernels")) {
    // A kernel record of `gpulens run --kernels` (docs/kernels.md): to the sink,
    // else kept whole.
    if (options_.kernel_record_sink) {
      options_.kernel_record_sink(*j);
    } else {
      kernel_records_.push_back(std::move(*j));
    }
    return std::optional<TraceEvent>{};
  } else if (j->contains("gpu")) {
    auto sample = sample_from_json(*j);
    if (sample) {
      if (auto unknown = check_gpu(sample->gpu); !unknown.empty()) {
        problem = std::move(unknown);
      } else if (!plausible_time(sample->t)) {
        return drop_for_time(sample->t);
      } else {
        std::string first;
        if (const auto dropped = drop_out_of_range(sample->values, &first); dropped > 0) {
          if (out_of_range_ == 0) first_out_of_range_ = fmt::format("line {}, {}", line_no_, first);
          out_of_range_ += dropped;
        }
        return std::optional<TraceEvent>{std::move(*sample)};
      }
    } else {
      problem = sample.error().message;
    }
  } else {
    problem = "neither a sample (no \"gpu\") nor a mark (no \"mark\")";
  }
  return skip_or_fail(problem);
}

std::string TraceReader::check_gpu(int gpu) const {
  const auto& devices = header_.devices;
  if (devices.empty()) {
    // A header that lists no devices: any index a header could describe.
    if (gpu >= 0 && static_cast<std::size_t>(gpu) < kMaxDevices) return {};
    return fmt::format("GPU {} is outside 0..{}", gpu, kMaxDevices - 1);
  }
  const bool described = std::any_of(devices.begin(), devices.end(),
                                     [gpu](const DeviceInfo& d) { return d.index == gpu; });
  if (described) return {};
  return fmt::format("a sample for GPU {}, which the header does not describe", gpu);
}

Result<std::optional<TraceEvent>> TraceReader::drop_for_time(double t) {
  if (bad_times_ == 0) first_bad_time_ = fmt::format("line {}, t {}", line_no_, t);
  ++bad_times_;
  return std::optional<TraceEvent>{};
}

void TraceReader::report_dropped() {
  if (reported_dropped_) return;
  reported_dropped_ = true;
  if (out_of_range_ > 0) {
    warnings_.push_back(
        fmt::format("{}: {} reading(s) out of range dropped (first: {}); the ranges are in "
                    "docs/trace-format.md",
                    name_, out_of_range_, first_out_of_range_));
  }
  if (bad_times_ > 0) {
    warnings_.push_back(
        fmt::format("{}: {} line(s) with a time outside 1900..2200 dropped (first: {})", name_,
                    bad_times_, first_bad_time_));
  }
}

// A kernel record gpulens cannot read (too long, not JSON: someone else's writer,
// or a file cut short) costs the report only that record: it goes to the kernel
// records as one that says which line and why, and the kernel view shows it.
bool TraceReader::refuse_kernel_record(const std::string& line, const std::string& problem) {
  const std::string_view head = std::string_view(line).substr(0, 256);
  // Version 4 writes "x_kernels" among its first keys; versions 1 to 3 wrote their
  // keys sorted, "x_kernels" last, so their long lines (a whole job's intervals)
  // start with the activity they recorded.
  if (head.find("\"x_kernels\"") == std::string_view::npos &&
      !head.starts_with("{\"activity\":{\"first_ns\":")) {
    return false;
  }
  std::string what = "a kernel record";
  const auto pid = head.find("\"pid\":");
  if (pid != std::string_view::npos) {
    std::size_t end = pid + 6;
    while (end < head.size() && (std::isdigit(static_cast<unsigned char>(head[end])) != 0)) ++end;
    if (end > pid + 6) what += " of process " + std::string(head.substr(pid + 6, end - pid - 6));
  }
  nlohmann::json note = {
      {"x_kernels", 3},
      {"status", "unreadable"},
      {"reason", fmt::format("{} at {}:{} not read: {}", what, name_, line_no_, problem)}};
  if (options_.kernel_record_sink) {
    options_.kernel_record_sink(note);
  } else {
    kernel_records_.push_back(std::move(note));
  }
  return true;
}

Result<std::optional<TraceEvent>> TraceReader::skip_or_fail(const std::string& problem) {
  if (options_.lenient) {
    ++skipped_;
    return std::optional<TraceEvent>{};
  }
  return Error{fmt::format("{}:{}: {}", name_, line_no_, problem)};
}

Result<std::optional<TraceEvent>> TraceReader::next() {
  std::string line;
  while (true) {
    const LineRead read = read_line_bounded(*in_, line);
    if (read == LineRead::End) break;
    ++line_no_;
    if (read == LineRead::TooLong) {
      skip_line(*in_);
      if (refuse_kernel_record(line, fmt::format("longer than {} bytes", kMaxLineBytes))) continue;
      auto skipped = skip_or_fail(fmt::format("longer than {} bytes", kMaxLineBytes));
      if (!skipped) return skipped;
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const bool last_line = in_->peek() == std::char_traits<char>::eof();
    auto event = parse_line(line, last_line);
    if (!event) return event;
    if (event->has_value()) return event;
  }
  report_dropped();
  if (options_.lenient && skipped_ > 0 && !reported_skipped_) {
    reported_skipped_ = true;
    warnings_.push_back(fmt::format("{}: {} malformed line(s) skipped", name_, skipped_));
  }
  return std::optional<TraceEvent>{};
}

namespace {

Result<Trace> read_all(Result<TraceReader> opened) {
  if (!opened) return opened.error();
  auto& reader = *opened;
  Trace trace;
  trace.header = reader.header();
  while (true) {
    auto event = reader.next();
    if (!event) return event.error();
    if (!event->has_value()) break;
    if (auto* sample = std::get_if<Sample>(&**event)) {
      trace.samples.push_back(std::move(*sample));
    } else {
      trace.marks.push_back(std::get<Mark>(std::move(**event)));
    }
  }
  trace.warnings = reader.warnings();
  trace.kernel_records = reader.kernel_records();
  trace.launch_records = reader.launch_records();
  return trace;
}

}  // namespace

Result<Trace> read_trace(const std::string& path, TraceReadOptions options) {
  return read_all(TraceReader::open(path, options));
}

Result<Trace> read_trace_string(std::string text, std::string name, TraceReadOptions options) {
  return read_all(TraceReader::from_string(std::move(text), std::move(name), options));
}

}  // namespace gpulens

#include "core/trace_reader.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <sstream>

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
  if (!std::getline(*reader.in_, first)) {
    return Error{fmt::format("{}: empty (expected a gpu-trace header on line 1)", reader.name_)};
  }
  reader.line_no_ = 1;
  const auto j = nlohmann::json::parse(first, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Error{fmt::format("{}:1: the header is not valid JSON", reader.name_)};
  }
  auto header = header_from_json(j);
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
  bool in_string = false, changed = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
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
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) {
    std::string patched = line;
    if (replace_non_finite_tokens(patched)) {
      j = nlohmann::json::parse(patched, nullptr, false);
      if (!j.is_discarded() && !warned_non_finite_) {
        warned_non_finite_ = true;
        warnings_.push_back(
            fmt::format("{}:{}: NaN/Infinity read as not measured", name_, line_no_));
      }
    }
  }
  std::string problem;
  if (j.is_discarded()) {
    if (last_line) {
      // A recording cut off by a crash: keep everything before it.
      warnings_.push_back(fmt::format("{}:{}: truncated last line skipped", name_, line_no_));
      return std::optional<TraceEvent>{};
    }
    problem = "not valid JSON";
  } else if (!j.is_object()) {
    problem = "not a JSON object";
  } else if (j.contains("mark")) {
    if (!j["mark"].is_string() || !j.contains("t") || !j["t"].is_number()) {
      problem = "a mark needs a string \"mark\" and a numeric \"t\"";
    } else {
      return std::optional<TraceEvent>{mark_from_json(j)};
    }
  } else if (j.contains("x_kernels")) {
    // A kernel record of `gpulens run --kernels` (docs/kernels.md): kept whole.
    kernel_records_.push_back(std::move(j));
    return std::optional<TraceEvent>{};
  } else if (j.contains("gpu")) {
    auto sample = sample_from_json(j);
    if (sample) return std::optional<TraceEvent>{std::move(*sample)};
    problem = sample.error().message;
  } else {
    problem = "neither a sample (no \"gpu\") nor a mark (no \"mark\")";
  }
  if (options_.lenient) {
    ++skipped_;
    return std::optional<TraceEvent>{};
  }
  return Error{fmt::format("{}:{}: {}", name_, line_no_, problem)};
}

Result<std::optional<TraceEvent>> TraceReader::next() {
  std::string line;
  while (std::getline(*in_, line)) {
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const bool last_line = in_->peek() == std::char_traits<char>::eof();
    auto event = parse_line(line, last_line);
    if (!event) return event;
    if (event->has_value()) return event;
  }
  if (options_.lenient && skipped_ > 0 && warnings_.empty()) {
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

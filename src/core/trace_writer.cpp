// SPDX-License-Identifier: Apache-2.0
#include "core/trace_writer.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "core/json_format.hpp"
#include "core/trace_reader.hpp"

namespace gpulens {

Result<TraceWriter> TraceWriter::open(const std::string& path, const TraceHeader& header) {
  TraceWriter writer;
  writer.path_ = path;
  if (path == "-") {
    writer.file_ = stdout;
  } else {
    writer.file_ = std::fopen(path.c_str(), "w");
    if (writer.file_ == nullptr) {
      return Error{fmt::format("{}: cannot write: {}", path, std::strerror(errno))};
    }
    writer.owns_ = true;
  }
  auto status = writer.write_line(header_to_json(header).dump());
  if (!status) return status.error();
  return writer;
}

Status TraceWriter::write_line(const std::string& line) {
  if (file_ == nullptr) return Error{fmt::format("{}: writer is closed", path_)};
  // One fwrite + fflush per line: a crash leaves at most one partial line.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() ||
      std::fputc('\n', file_) == EOF || std::fflush(file_) != 0) {
    return Error{fmt::format("{}: write failed: {}", path_, std::strerror(errno))};
  }
  return ok_status();
}

Status TraceWriter::write(const Sample& sample) {
  std::string line;
  line.reserve(1024);
  append_sample_json(line, sample);
  return write_line(line);
}

Status TraceWriter::write(const Mark& mark) {
  return write_line(mark_to_json(mark).dump());
}

Status TraceWriter::write(const Tick& tick) {
  for (const auto& mark : tick.marks) {
    if (auto s = write(mark); !s) return s;
  }
  for (const auto& sample : tick.samples) {
    if (auto s = write(sample); !s) return s;
  }
  return ok_status();
}

Status TraceWriter::flush() {
  if (file_ != nullptr && std::fflush(file_) != 0) {
    return Error{fmt::format("{}: flush failed: {}", path_, std::strerror(errno))};
  }
  return ok_status();
}

void TraceWriter::close() {
  if (file_ != nullptr && owns_) std::fclose(file_);
  file_ = nullptr;
}

TraceWriter::TraceWriter(TraceWriter&& other) noexcept
    : file_(std::exchange(other.file_, nullptr)),
      owns_(other.owns_),
      path_(std::move(other.path_)) {}

TraceWriter& TraceWriter::operator=(TraceWriter&& other) noexcept {
  if (this != &other) {
    close();
    file_ = std::exchange(other.file_, nullptr);
    owns_ = other.owns_;
    path_ = std::move(other.path_);
  }
  return *this;
}

TraceWriter::~TraceWriter() {
  close();
}

}  // namespace gpulens

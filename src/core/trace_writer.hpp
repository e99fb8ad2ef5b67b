// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writer for gpu-trace v1. Each line is flushed whole so that a crash leaves at
// most one truncated line, which readers skip.
#include <cstdio>
#include <string>

#include "core/result.hpp"
#include "core/sample.hpp"

namespace gpulens {

class TraceWriter {
 public:
  // path "-" writes to stdout.
  static Result<TraceWriter> open(const std::string& path, const TraceHeader& header);
  Status write(const Sample& sample);
  Status write(const Mark& mark);
  Status write(const Tick& tick);  // marks first, then samples
  Status flush();
  void close();

  TraceWriter(TraceWriter&& other) noexcept;
  TraceWriter& operator=(TraceWriter&& other) noexcept;
  ~TraceWriter();

 private:
  TraceWriter() = default;
  Status write_line(const std::string& line);
  std::FILE* file_ = nullptr;
  bool owns_ = false;
  std::string path_;
};

}  // namespace gpulens

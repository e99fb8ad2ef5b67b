// SPDX-License-Identifier: Apache-2.0
#pragma once
// Follows a JSON-lines marks file that a workload appends to (GPULENS_MARKS), so
// its phase and step marks land in the recording beside the samples.
#include <string>
#include <string_view>
#include <vector>

#include "core/input_limits.hpp"
#include "core/sample.hpp"

namespace gpulens {

class MarksTail {
 public:
  explicit MarksTail(std::string path, std::size_t max_bytes = kMaxMarksFileBytes)
      : path_(std::move(path)), max_bytes_(max_bytes) {}
  // New complete lines since the last call. A line without "t" gets `now_s`; a line
  // that is not a JSON object with a string "mark" is counted in bad_lines().
  // Reads `max_bytes` at most in all, and only from a regular file: once
  // the job puts anything else there (a FIFO, a link to /dev/zero) it is no longer
  // read, and refused() says why.
  std::vector<Mark> poll(double now_s);
  std::size_t bad_lines() const { return bad_lines_; }
  const std::string& path() const { return path_; }
  // Non-empty once the file is no longer read: what stood there ("not a regular
  // file (a FIFO)").
  const std::string& refused() const { return refused_; }
  // The file held more than `max_bytes`: the rest was not read.
  bool truncated() const { return truncated_; }

 private:
  // Splits newly read bytes into lines; a line longer than kMaxLineBytes is dropped.
  void take(std::string_view chunk, double now_s, std::vector<Mark>& marks);
  std::string path_;
  std::size_t max_bytes_;
  long long offset_ = 0;
  std::string partial_;
  std::size_t bad_lines_ = 0;
  bool discarding_ = false;  // inside a line already counted as too long
  std::string refused_;
  bool truncated_ = false;
};

// Parses one marks line; nullopt if it is not a mark.
std::optional<Mark> parse_mark_line(const std::string& line, double now_s);

}  // namespace gpulens

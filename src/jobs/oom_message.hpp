// SPDX-License-Identifier: Apache-2.0
#pragma once
// The out-of-memory messages of CUDA and of the frameworks on it, read from what
// a job writes on stderr (`gpulens run`): the job's own words settle how it died
// where the counters cannot (a failed request leaves memory short of the ceiling
// by its size). Only a bounded state is kept, never the stream: the line being
// read (cut at kMaxScanLine) and the message found.
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/job_marks.hpp"

namespace gpulens::jobs {

// Bytes of one line looked at; the rest of a longer line is not.
inline constexpr std::size_t kMaxScanLine = 8192;

// The message one line holds, if any: its source, the line (terminal-safe,
// bounded) and the figures it gives ("Tried to allocate 4.00 GiB", "3.19 GiB is
// free", "allocate 17179869184 bytes"). Only state and the oom_* fields are set.
std::optional<StderrScan> recognise_oom_line(std::string_view line);

// Fed the job's stderr in chunks as they come; keeps the first message found, or
// a later one that gives figures where the first gave none (PyTorch prints
// "CUDA error: out of memory" before "torch.OutOfMemoryError: ... Tried to
// allocate"). Thread-safe: the relay feeds it while the job ends.
class OomScanner {
 public:
  void feed(std::string_view bytes);
  // What was found so far, with the line not yet ended looked at too.
  StderrScan found() const;

 private:
  void line_done_locked();
  static bool better(const StderrScan& now, const StderrScan& candidate);
  mutable std::mutex mutex_;
  std::string line_;
  bool line_cut_ = false;  // the line passed kMaxScanLine: the rest is skipped
  std::optional<StderrScan> found_;
};

}  // namespace gpulens::jobs

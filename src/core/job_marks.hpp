// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two point marks `gpulens run` writes around the job it wraps, so that a
// trace alone says what ran, on which GPUs, and how it ended: `gpulens report`
// on the trace then gives the same verdict as the run did.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample.hpp"

namespace gpulens {

inline constexpr const char* kJobStartMark = "job_start";
inline constexpr const char* kJobEndMark = "job_end";

// What `gpulens run` read on the job's stderr about running out of memory
// (docs/trace-format.md, the job_end mark). The job's own words settle how it
// died where the counters cannot: a request that failed leaves memory short of
// the ceiling by its size.
struct StderrScan {
  // "read": read to its end, or to the job's exit; "off": `--no-stderr-scan`;
  // "not_captured": no pipe or terminal could be set up; "incomplete": the reader
  // stopped before the job's last words (our stderr closed, or still behind when
  // the job exited). Empty: the recording does not say (older, or not `run`).
  std::string state;
  std::string oom_message;                 // the job's out-of-memory line, terminal-safe, bounded
  std::string oom_source;                  // "pytorch", "cuda", "jax", "tensorflow", "cupy"
  std::optional<double> oom_tried_mib;     // the allocation that failed
  std::optional<double> oom_free_mib;      // what the framework said was free
  std::optional<double> oom_capacity_mib;  // the device's capacity as it said it

  bool read() const { return state == "read"; }
};

// The longest out-of-memory line kept, in bytes.
inline constexpr std::size_t kOomMessageMax = 512;

struct JobRecord {
  bool present = false;  // the trace has job marks
  std::optional<double> start;
  std::optional<double> end;
  std::string command;  // argv joined with spaces, for people
  std::optional<int> pid;
  std::optional<int> exit_code;  // the child's exit status
  std::optional<int> signal;     // it was killed by this signal
  std::vector<int> gpus;         // GPUs the job used; empty = not known
  std::string gpus_basis;        // how they were chosen ("processes", "--gpus", "all")
  std::string not_measured;      // why no GPU was sampled; empty when GPUs were sampled
  // The job's marks file (GPULENS_MARKS): lines that were not marks, and why it
  // was not read to its end ("not a regular file (a FIFO)"; empty: it was).
  std::uint64_t marks_skipped = 0;
  std::string marks_problem;
  StderrScan stderr_scan;

  // What gpulens itself exits with: the child's code, or 128 + its signal.
  int exit_status() const;
};

JobRecord job_from_marks(const std::vector<Mark>& marks);
Mark job_start_mark(double t, const std::string& command, int pid);
Mark job_end_mark(double t, const JobRecord& job);

// An out-of-memory line as kept: terminal-safe, one line, at most kOomMessageMax bytes.
std::string oom_message_text(std::string_view line);

// "python train.py --lr '3e-4 x'": argv quoted the way a shell would need it.
std::string join_command(const std::vector<std::string>& argv);

}  // namespace gpulens

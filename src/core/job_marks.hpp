// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two point marks `gpulens run` writes around the job it wraps, so that a
// trace alone says what ran, on which GPUs, and how it ended: `gpulens report`
// on the trace then gives the same verdict as the run did.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"

namespace gpulens {

inline constexpr const char* kJobStartMark = "job_start";
inline constexpr const char* kJobEndMark = "job_end";

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

  // What gpulens itself exits with: the child's code, or 128 + its signal.
  int exit_status() const;
};

JobRecord job_from_marks(const std::vector<Mark>& marks);
Mark job_start_mark(double t, const std::string& command, int pid);
Mark job_end_mark(double t, const JobRecord& job);

// "python train.py --lr '3e-4 x'": argv quoted the way a shell would need it.
std::string join_command(const std::vector<std::string>& argv);

}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the job ended: exited cleanly, failed with a code, killed by a signal, and
// whether it died out of memory. Two witnesses: what the job wrote on stderr
// (`gpulens run` keeps its out-of-memory line in the job_end mark), and whether a
// GPU's memory stood at the ceiling in the last seconds before a failure, which is
// how an out-of-memory error looks from outside the process. The counters alone
// miss a large request that failed (136.6 of 140.4 GiB used, 4 GiB asked for);
// the stderr alone misses a message in words gpulens does not know.
#include <optional>
#include <string>
#include <vector>

#include "core/job_marks.hpp"
#include "core/trace_reader.hpp"

namespace gpulens::verdict {

// Memory "at the ceiling": within this share of the device's total, or within
// this many MiB, whichever is more lenient. A failed allocation leaves the last
// request unallocated (a 384 MiB activation, a 1 GiB buffer) plus the driver's
// reserve, so used memory stops a little short of the total.
inline constexpr double kOomMarginShare = 0.01;
inline constexpr double kOomMarginMib = 512;
// "The last seconds": the process frees its memory while it unwinds and exits,
// so the peak of this span before the end is what counts.
inline constexpr double kOomLookbackS = 10;

enum class JobEnd { Unknown, Exited, Failed, Killed };
std::string_view job_end_id(JobEnd end);  // "unknown", "exited", "failed", "killed"

struct JobOutcome {
  JobEnd end = JobEnd::Unknown;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<double> end_t;
  // A failed or killed job that said it ran out of memory, or whose device
  // memory was at the ceiling in the last seconds: it died out of memory.
  bool out_of_memory = false;
  bool memory_at_ceiling = false;  // the counters' word alone
  StderrScan stderr_scan;          // the job's own (its state says whether it was read)
  std::optional<int> gpu;          // the GPU with the fullest memory in the last seconds
  std::optional<double> memory_peak_mib;
  std::optional<double> memory_total_mib;

  bool died() const { return end == JobEnd::Failed || end == JobEnd::Killed; }
  bool said_out_of_memory() const { return !stderr_scan.oom_message.empty(); }
  // What out_of_memory rests on: "stderr_and_counters", "stderr", "counters", or
  // "none" (neither said it).
  std::string_view out_of_memory_basis() const;
};

// `gpus`: the GPUs the job used. Without job marks the outcome is Unknown.
JobOutcome job_outcome(const Trace& trace, const JobRecord& job, const std::vector<int>& gpus);

// "SIGKILL" for 9; "signal 70" for one without a name here.
std::string signal_name(int signal);

}  // namespace gpulens::verdict

// SPDX-License-Identifier: Apache-2.0
#pragma once
// One Slurm job read back from the agent's history as a trace, for `gpulens
// report --slurm-job ID`: the job's GPUs (every GPU its prolog said it holds, and
// every GPU a process of it held) from the first to the last tick any of them was
// seen, judged by the same code as a
// recording. The GPUs of a Slurm job are its own for the whole job, so each is
// judged over the whole span.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "store/history_trace.hpp"
#include "store/slurm_jobs.hpp"

namespace gpulens::store {

// The jobs an unknown id's error lists, newest first.
inline constexpr int kJobsListed = 5;

struct SlurmJobTrace {
  HistoryTrace history;  // history.trace holds the job's GPUs over [from, to)
  std::string job;
  std::string user;                // the job's user as last seen; empty when unknown
  std::string account;             // empty when unknown
  std::vector<std::string> steps;  // the steps whose processes were seen, not the allocation
  // Slurm's prolog said the job held its GPUs (rows of kAllocationStep): the span
  // and the GPUs are the allocation's, and its samples carry it (the funnel's
  // allocated stage is then the scheduler's word).
  bool allocated = false;
  std::vector<int> gpus;
  double first_t = 0;  // the first and the last tick a process of the job was seen
  double last_t = 0;
  // A job of several nodes judged from its parts (cli/slurm_job_parts.hpp): per
  // node, "node-a GPUs 2, 3 (its 0, 1)"; empty for one node's history.
  std::vector<std::string> node_parts;
  std::vector<SlurmJobUse> uses;    // the table's rows, by GPU
  std::vector<SlurmJobUse> shared;  // other jobs seen on its GPUs within its span
};

// `job` must already be a valid Slurm job id (sources/host/slurm_ids.hpp). Errors
// name the file and say what to do: the file's own (open_history_file), a
// history older than Slurm job tracking, a job it never saw (with the latest it
// did), a job whose samples retention or the size bound already dropped (with
// what the file still holds).
Result<SlurmJobTrace> load_slurm_job_trace(const std::string& path, std::string_view job,
                                           std::size_t max_raw_samples = kMaxRawSamples);

}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulens report --slurm-job ID`: the id checked as the Slurm attribution checks
// it, and the verdict of the job's GPUs and span from the agent's history told
// as a Slurm job's (headline, source lines, the JSON's "source").
#include <string>
#include <string_view>

#include "cli/report_setup.hpp"
#include "core/result.hpp"
#include "store/slurm_job_trace.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::cli {

// The canonical job id ("007" -> "7"), or why `text` is none: 1 to 10 digits,
// 1 to 4294967293 (sources/host/slurm_ids.hpp), with a hint for an array task
// ("123_4") or a step ("123.0").
Result<std::string> parse_slurm_job_arg(std::string_view text);

std::string render_slurm_job(const verdict::Verdict& v, const Trace& trace, ReportFormat format,
                             const store::SlurmJobTrace& job, const std::string& db);

}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
#pragma once
// One Slurm job over several nodes, judged as one: each node's part as its agent
// serves it (GET /api/v1/slurm/job?id=ID, a gpu-trace whose header names the node
// and the job), merged into one trace whose GPUs are numbered node after node, so
// that the funnel, the cost and the imbalance between GPUs take in every node.
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "store/slurm_job_trace.hpp"

namespace gpulens::cli {

// Most parts one verdict takes: a job of 256 nodes of 8 GPUs is 2,048 GPUs, past
// the trace reader's 1,024 devices long before.
inline constexpr std::size_t kMaxJobParts = 256;

// The job from its parts (files in the order given, each a node's); errors name
// the file: unreadable, not an agent's part, another job's, a node given twice.
Result<store::SlurmJobTrace> load_slurm_job_parts(const std::vector<std::string>& files,
                                                  std::string_view job);

}  // namespace gpulens::cli

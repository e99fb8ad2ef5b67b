// SPDX-License-Identifier: Apache-2.0
#pragma once
// The processes of a job: its first process and everything that descends from
// it, read from procfs, so that `gpulens run` knows which GPUs the job uses (a
// launcher such as torchrun starts the processes that actually open the GPUs).
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/sample.hpp"

namespace gpulens::jobs {

// `root` and its descendants among the processes listed in `procfs`; just
// `root` when procfs cannot be read.
std::set<std::uint32_t> process_tree(const std::string& procfs, std::uint32_t root);

// Parent links -> the descendants of `root` (root included). Pure, for tests.
std::set<std::uint32_t> descendants(
    const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pid_ppid, std::uint32_t root);

// GPUs in `samples` on which one of `pids` holds a context.
std::set<int> gpus_used_by(const std::vector<Sample>& samples, const std::set<std::uint32_t>& pids);

}  // namespace gpulens::jobs

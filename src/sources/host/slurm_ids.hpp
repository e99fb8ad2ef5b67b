// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a Slurm id or name may look like, shared by the cgroup and environment
// readers: anything else is malformed input, never a label or a column.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpulens::sources {

// The longest user or account name kept. Slurm's own names are far shorter (a user
// name is at most 32 bytes on Linux); a longer value is someone's mistake or attack.
inline constexpr std::size_t kMaxSlurmNameBytes = 128;

// A number as Slurm prints it: 1 to 10 decimal digits, at most 2^32-3 (Slurm keeps
// 0xfffffffe and 0xffffffff for "no value" and "infinite"). Canonical text ("007" -> "7").
std::optional<std::string> valid_slurm_number(std::string_view text);
// A job id: a number above 0.
std::optional<std::string> valid_slurm_job_id(std::string_view text);
// A step id: a number, or one of Slurm's named steps (batch, extern, interactive).
std::optional<std::string> valid_slurm_step(std::string_view text);
// A user or account name: 1 to kMaxSlurmNameBytes printable ASCII bytes, no space.
std::optional<std::string> valid_slurm_name(std::string_view text);

}  // namespace gpulens::sources

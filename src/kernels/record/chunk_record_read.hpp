// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads one line of a version-4 kernel record (chunk_record.hpp) into its type,
// through the checked readers: the job's processes wrote the file, so no field is
// trusted, and a field at fault makes the line unreadable with the field named.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <variant>

#include "core/result.hpp"
#include "kernels/record/chunk_record.hpp"

namespace gpulens::kernels {

struct ChunkLine {
  std::int64_t pid = 0;
  std::uint64_t seq = 0, part = 0;
  std::variant<ProcessRecord, NamesRecord, ChunkRecord, EndRecord> record;
};

// Whether the line is of version 4 or later (else the version-1-to-3 reader's).
bool is_chunk_line(const nlohmann::json& line);

Result<ChunkLine> read_chunk_line(const nlohmann::json& line);

}  // namespace gpulens::kernels

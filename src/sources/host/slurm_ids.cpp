// SPDX-License-Identifier: Apache-2.0
#include "sources/host/slurm_ids.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "sources/host/text_scan.hpp"

namespace gpulens::sources {
namespace {
constexpr std::uint64_t kMaxSlurmId = 0xfffffffdu;
constexpr std::size_t kMaxIdDigits = 10;
}  // namespace

std::optional<std::string> valid_slurm_number(std::string_view text) {
  if (text.empty() || text.size() > kMaxIdDigits) return std::nullopt;
  const auto v = text_scan::to_unsigned(text);
  if (!v || *v > kMaxSlurmId) return std::nullopt;
  return std::to_string(*v);
}

std::optional<std::string> valid_slurm_job_id(std::string_view text) {
  auto id = valid_slurm_number(text);
  if (id && *id == "0") return std::nullopt;
  return id;
}

std::optional<std::string> valid_slurm_step(std::string_view text) {
  static constexpr std::array<std::string_view, 3> kNamed{"batch", "extern", "interactive"};
  for (const auto name : kNamed) {
    if (text == name) return std::string(name);
  }
  return valid_slurm_number(text);
}

std::optional<std::string> valid_slurm_name(std::string_view text) {
  if (text.empty() || text.size() > kMaxSlurmNameBytes) return std::nullopt;
  const bool printable =
      std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 0x7f; });
  if (!printable) return std::nullopt;
  return std::string(text);
}

}  // namespace gpulens::sources

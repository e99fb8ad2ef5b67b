// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/state.hpp"

#include <nlohmann/json.hpp>

#include "core/json_number.hpp"
#include "diagnosis/state_table.hpp"

namespace gpulens::diagnosis {
namespace {

constexpr std::array<std::string_view, 3> kSeverities{"info", "warning", "critical"};

}  // namespace

std::string_view state_id(GpuState state) {
  return state_row(state).id;
}

std::string_view state_meaning(GpuState state) {
  return state_row(state).meaning;
}

std::optional<GpuState> state_from_id(std::string_view id) {
  for (const auto& row : state_rows()) {
    if (row.id == id) return row.state;
  }
  return std::nullopt;
}

const std::array<GpuState, kGpuStateCount>& all_states() {
  static const std::array<GpuState, kGpuStateCount> states = [] {
    std::array<GpuState, kGpuStateCount> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = state_rows()[i].state;
    return out;
  }();
  return states;
}

std::string_view severity_id(Severity severity) {
  return kSeverities[static_cast<std::size_t>(severity)];
}

std::optional<Severity> severity_from_id(std::string_view id) {
  for (std::size_t i = 0; i < kSeverities.size(); ++i) {
    if (kSeverities[i] == id) return static_cast<Severity>(i);
  }
  return std::nullopt;
}

std::string_view confidence_level(double confidence) {
  if (confidence >= 0.75) return "high";
  if (confidence >= 0.5) return "medium";
  return "low";
}

void to_json(nlohmann::ordered_json& j, const Evidence& e) {
  j = nlohmann::ordered_json::object();
  j["key"] = e.key;
  j["value"] = json_number(e.value, decimals::kRatio);
  if (!e.op.empty()) j["op"] = e.op;
  if (e.threshold) j["threshold"] = json_number(*e.threshold, decimals::kRatio);
  if (!e.unit.empty()) j["unit"] = e.unit;
  if (!e.note.empty()) j["note"] = e.note;
}

}  // namespace gpulens::diagnosis

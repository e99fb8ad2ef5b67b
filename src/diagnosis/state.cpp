// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/state.hpp"

#include <nlohmann/json.hpp>

#include "core/json_number.hpp"

namespace gpulens::diagnosis {
namespace {

struct StateInfo {
  GpuState state;
  std::string_view id;
  std::string_view meaning;
};

constexpr std::array<StateInfo, kGpuStateCount> kStates{{
    {GpuState::Unknown, "unknown", "the metrics needed to tell were not measured"},
    {GpuState::Idle, "idle", "no kernels ran"},
    {GpuState::IdleHoldingMemory, "idle_holding_memory",
     "no kernels ran, but a process holds a large share of device memory"},
    {GpuState::ComputeBound, "compute_bound",
     "SMs are busy (tensor or CUDA cores): the healthy case"},
    {GpuState::MemoryBound, "memory_bound", "DRAM bandwidth is the limit"},
    {GpuState::InterconnectBound, "interconnect_bound",
     "NVLink traffic dominates while SMs are mostly idle (collectives)"},
    {GpuState::PcieBound, "pcie_bound", "host-device copies dominate while SMs are idle"},
    {GpuState::HostBound, "host_bound",
     "the GPU waits for the host most of the time; kernels are large when they run"},
    {GpuState::LaunchBound, "launch_bound",
     "kernels are tiny: kernel time is spent with almost no SM working"},
    {GpuState::SmUnderused, "sm_underused",
     "a kernel runs nearly all the time but occupies a small share of the SMs"},
    {GpuState::WaitingOnPeer, "waiting_on_peer",
     "a kernel is running but the SMs are idle while other GPUs of the same job are busy"},
    {GpuState::Busy, "busy",
     "kernels run most of the time; how well they use the SMs was not measured (no GPM)"},
}};

constexpr bool states_in_enum_order() {
  for (std::size_t i = 0; i < kStates.size(); ++i) {
    if (state_index(kStates[i].state) != i) return false;
  }
  return true;
}
static_assert(states_in_enum_order(), "kStates must list states in enum order");

constexpr std::array<std::string_view, 3> kSeverities{"info", "warning", "critical"};

}  // namespace

std::string_view state_id(GpuState state) {
  const auto i = state_index(state);
  return i < kStates.size() ? kStates[i].id : std::string_view("unknown");
}

std::string_view state_meaning(GpuState state) {
  const auto i = state_index(state);
  return i < kStates.size() ? kStates[i].meaning : std::string_view();
}

std::optional<GpuState> state_from_id(std::string_view id) {
  for (const auto& s : kStates) {
    if (s.id == id) return s.state;
  }
  return std::nullopt;
}

const std::array<GpuState, kGpuStateCount>& all_states() {
  static const std::array<GpuState, kGpuStateCount> states = [] {
    std::array<GpuState, kGpuStateCount> out{};
    for (std::size_t i = 0; i < kStates.size(); ++i) out[i] = kStates[i].state;
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

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The diagnosis vocabulary (docs/diagnosis.md, "States"): stable ids that every output uses,
// the evidence behind a finding, and alert severities.
#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulens::diagnosis {

// Primary state of one GPU over a window. `Unknown` is not in the design's table:
// it is what the engine says when the metrics it needs were not measured.
enum class GpuState : std::uint8_t {
  Unknown,
  Idle,
  IdleHoldingMemory,
  ComputeBound,
  MemoryBound,
  InterconnectBound,
  PcieBound,
  HostBound,
  LaunchBound,
  SmUnderused,
  WaitingOnPeer,
  // Kernels run most of the time and SM activity was not measured (no GPM: a GPU
  // older than Hopper, or GPM denied): the GPU works, how well is not known. Last,
  // so that the codes of the states before it stay what they were.
  Busy,
  Count
};

inline constexpr std::size_t kGpuStateCount = static_cast<std::size_t>(GpuState::Count);
inline constexpr std::size_t state_index(GpuState s) {
  return static_cast<std::size_t>(s);
}

std::string_view state_id(GpuState state);       // "sm_underused"
std::string_view state_meaning(GpuState state);  // the user's words, from design.md
std::optional<GpuState> state_from_id(std::string_view id);
const std::array<GpuState, kGpuStateCount>& all_states();

enum class Severity : std::uint8_t { Info, Warning, Critical };
std::string_view severity_id(Severity severity);
std::optional<Severity> severity_from_id(std::string_view id);

// One fact behind a finding: a measured value and the threshold it was held
// against, so that a reader can check the verdict instead of trusting it.
struct Evidence {
  std::string key;  // metric key ("sm_active") or a derived one ("sm_active/gpu_util")
  std::optional<double> value;
  std::string op;  // ">=", "<", ...; empty when the value is context, not a test
  std::optional<double> threshold;
  std::string unit;
  std::string note;  // optional words ("PCIe Gen5 x16 per direction")
  bool operator==(const Evidence&) const = default;
};

// {"key", "value", "op", "threshold", "unit", "note"}: the one JSON form of a
// fact, in the diagnosis report and the API alike. Value and threshold are
// rounded to decimals::kRatio; empty op, unit and note are left out.
// One reading of evidence as the classifier and the alert rules write it, in one line.
inline Evidence ev(std::string key, std::optional<double> value, std::string op = {},
                   std::optional<double> threshold = std::nullopt, std::string unit = {},
                   std::string note = {}) {
  return Evidence{std::move(key), value,           std::move(op),
                  threshold,      std::move(unit), std::move(note)};
}
void to_json(nlohmann::ordered_json& j, const Evidence& e);

// "high" (>= 0.75), "medium" (>= 0.5) or "low".
std::string_view confidence_level(double confidence);

}  // namespace gpulens::diagnosis

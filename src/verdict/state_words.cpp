// SPDX-License-Identifier: Apache-2.0
#include "verdict/state_words.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/text_units.hpp"

namespace gpulens {

std::string state_words(GpuState state) {
  switch (state) {
    case GpuState::Idle:
      return "idle";
    case GpuState::IdleHoldingMemory:
      return "idle while holding memory";
    case GpuState::ComputeBound:
      return "compute-bound";
    case GpuState::MemoryBound:
      return "memory-bound";
    case GpuState::InterconnectBound:
      return "interconnect-bound";
    case GpuState::PcieBound:
      return "PCIe-bound";
    case GpuState::HostBound:
      return "host-bound";
    case GpuState::LaunchBound:
      return "launch-bound";
    case GpuState::SmUnderused:
      return "few SMs busy";
    case GpuState::WaitingOnPeer:
      return "waiting on another GPU";
    case GpuState::Unknown:
    case GpuState::Count:
      break;
  }
  return "not known";
}

std::string state_words(GpuState state, std::optional<double> held_mib) {
  if (state == GpuState::IdleHoldingMemory && held_mib && *held_mib > 0) {
    return "idle while holding " + gib_text(*held_mib);
  }
  return state_words(state);
}

std::string rule_words(const std::string& rule) {
  std::string out = rule;
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
#include "verdict/state_words.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/text_units.hpp"

namespace gpulens::verdict {

std::string state_words(diagnosis::GpuState state) {
  switch (state) {
    case diagnosis::GpuState::Idle:
      return "idle";
    case diagnosis::GpuState::IdleHoldingMemory:
      return "idle while holding memory";
    case diagnosis::GpuState::ComputeBound:
      return "compute-bound";
    case diagnosis::GpuState::MemoryBound:
      return "memory-bound";
    case diagnosis::GpuState::InterconnectBound:
      return "interconnect-bound";
    case diagnosis::GpuState::PcieBound:
      return "PCIe-bound";
    case diagnosis::GpuState::HostBound:
      return "host-bound";
    case diagnosis::GpuState::LaunchBound:
      return "launch-bound";
    case diagnosis::GpuState::SmUnderused:
      return "few SMs busy";
    case diagnosis::GpuState::WaitingOnPeer:
      return "waiting on another GPU";
    case diagnosis::GpuState::Busy:
      return "busy with kernels";
    case diagnosis::GpuState::Unknown:
    case diagnosis::GpuState::Count:
      break;
  }
  return "not known";
}

std::string state_words(diagnosis::GpuState state, std::optional<double> held_mib) {
  if (state == diagnosis::GpuState::IdleHoldingMemory && held_mib && *held_mib > 0) {
    return "idle while holding " + gib_text(*held_mib);
  }
  return state_words(state);
}

std::string rule_words(const std::string& rule) {
  std::string out = rule;
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

}  // namespace gpulens::verdict

// SPDX-License-Identifier: Apache-2.0
#include "verdict/state_words.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/text_units.hpp"
#include "diagnosis/state_table.hpp"

namespace gpulens::verdict {

std::string state_words(diagnosis::GpuState state) {
  return std::string(diagnosis::state_row(state).words);
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

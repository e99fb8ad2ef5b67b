// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/state_colour.hpp"

#include <array>

namespace gpulens::diagnosis {
namespace {

// Indexed by GpuState. Twelve hues far enough apart to tell on a chart band;
// the busy-but-held-back states avoid green, idle ones are greys.
constexpr std::array<StateColour, kGpuStateCount> kColours = {{
    {"#e6e8ec", 254, Ansi8::White, true},     // unknown
    {"#c3c9d2", 251, Ansi8::White, false},    // idle
    {"#8c96a3", 246, Ansi8::Blue, false},     // idle_holding_memory
    {"#22a06b", 35, Ansi8::Green, true},      // compute_bound
    {"#e09b2d", 172, Ansi8::Yellow, true},    // memory_bound
    {"#8a63d2", 98, Ansi8::Magenta, true},    // interconnect_bound
    {"#d0567f", 168, Ansi8::Magenta, false},  // pcie_bound
    {"#e5533c", 167, Ansi8::Red, true},       // host_bound
    {"#c7a82a", 178, Ansi8::Yellow, false},   // launch_bound
    {"#3a86d4", 68, Ansi8::Blue, true},       // sm_underused
    {"#9a7350", 137, Ansi8::Cyan, true},      // waiting_on_peer
    // A teal, not green: the GPU works, but nothing says it works well.
    {"#2a9d9d", 30, Ansi8::Cyan, false},  // busy
}};

}  // namespace

const StateColour& state_colour(GpuState state) {
  const auto i = state_index(state);
  return i < kColours.size() ? kColours[i] : kColours[0];
}

}  // namespace gpulens::diagnosis

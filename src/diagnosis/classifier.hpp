// SPDX-License-Identifier: Apache-2.0
#pragma once
// The state of one GPU over its window, from the window means, the hardware's
// limits and the other GPUs of the same job. Pure: no clocks, no I/O.
#include <string>
#include <vector>

#include "diagnosis/hardware.hpp"
#include "diagnosis/state.hpp"
#include "diagnosis/state_facts.hpp"
#include "diagnosis/thresholds.hpp"
#include "diagnosis/throttle.hpp"
#include "diagnosis/window.hpp"

namespace gpulens::diagnosis {

struct StateFinding {
  GpuState state = GpuState::Unknown;
  double confidence = 0;  // 0..1
  std::vector<Evidence> evidence;
  std::vector<std::string> cannot_tell;  // what was not judged, and why
  StateFacts facts;
};

StateFinding classify_state(const WindowStats& window, const HardwareLimits& hw,
                            const Thresholds& th, const std::vector<PeerActivity>& peers,
                            double window_length_s);

}  // namespace gpulens::diagnosis

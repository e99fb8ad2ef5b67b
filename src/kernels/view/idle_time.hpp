// SPDX-License-Identifier: Apache-2.0
#pragma once
// Busy and idle over a span of one device's timeline: the one measure the view's
// steps (trace_windows, device_steps, reconcile) and the driver all take.
#include <utility>
#include <vector>

#include "kernels/view/view.hpp"

namespace gpulens::kernels {

// Idle statistics of merged, sorted busy intervals (seconds) over [from, to];
// `hidden` (sorted) the idle time the sketches closed inside them.
IdleStats idle_over(const std::vector<std::pair<double, double>>& busy, double from, double to,
                    const HiddenIdles* hidden = nullptr);

}  // namespace gpulens::kernels

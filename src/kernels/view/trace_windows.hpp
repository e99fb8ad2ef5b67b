// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel view of a job traced in windows (`gpulens run --kernels`, the default:
// src/inject/schedule.hpp). Each process records only what it launched while a
// window was open, so every question the analysis asks (how idle, in which gaps,
// per step, inside which NVTX range) is asked over the windows alone.
//
// A window's edges need care (docs/kernels.md, "Trace windows"). The GPU runs what
// was launched before the window opened first: on a job that keeps the GPU's queue
// full, the first recorded kernel starts only when that queue has drained, and the
// work launched just before the window closed runs on after it. Taken as opened
// and closed, such a window would read idle at its start. The queue at the close
// is measured (the last recorded work ends that long after it), and the window is
// taken that much later at both ends, as the GPU saw it.
#include <cstddef>
#include <utility>
#include <vector>

#include "kernels/view/idle_time.hpp"

namespace gpulens::kernels {

using Spans = std::vector<std::pair<double, double>>;

// The windows as the GPU saw them. `opened`: the windows as the process opened and
// closed them (sorted, disjoint); `busy`: the device's merged, sorted busy
// intervals. A window in which nothing started is kept as it was.
Spans windows_as_seen(const Spans& opened, const Spans& busy);

// Busy and idle summed over several spans (sorted, disjoint); the gap histogram
// counts the idle stretches of each span, cut at its edges.
IdleStats idle_over_spans(const Spans& busy, const Spans& spans,
                          const HiddenIdles* hidden = nullptr);

// Runs of consecutive steps lying whole inside one span: [first, last] indices into
// `steps` (sorted step marks), so steps[first]..steps[last] is one run.
std::vector<std::pair<std::size_t, std::size_t>> step_runs_inside(const std::vector<double>& steps,
                                                                  const Spans& spans);

}  // namespace gpulens::kernels

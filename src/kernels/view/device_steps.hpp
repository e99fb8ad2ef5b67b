// SPDX-License-Identifier: Apache-2.0
#pragma once
// One device's part of the kernel view (docs/kernels.md): how idle it was over
// what was traced of it, the same over the marked steps (with synchronisations
// per step), and the few median-length steps drawn as strips in the HTML report.
// Apart from analysis.cpp, which gathers the records: this asks questions of one
// device's merged busy time and the job's step marks only.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/view/trace_windows.hpp"
#include "kernels/view/view.hpp"

namespace gpulens::kernels {

struct DeviceInputs {
  std::uint32_t device = 0;
  std::string name;
  const Spans* busy = nullptr;    // the device's busy intervals (merged, sorted)
  const Spans* opened = nullptr;  // its trace windows as opened (merged); null: traced whole
  const std::vector<double>* steps = nullptr;  // step marks, sorted, on the analysis clock
  const SyncSpans* syncs = nullptr;            // the job's synchronisations (merged)
  const HiddenIdles* hidden = nullptr;         // idle time the sketches closed (or none)
  double origin_s = 0;                         // the analysis clock's zero, in Unix seconds
  std::size_t strips = 3;                      // median-length steps to draw
};

struct DeviceSteps {
  DeviceView view;
  std::optional<Spans> traced;  // traced in windows: the windows as the GPU saw them
  Spans attribution;            // where NVTX ranges split its idle time
  // Traced in windows with steps marked, but no step lay whole inside one window.
  bool no_step_inside_windows = false;
};

DeviceSteps device_steps(const DeviceInputs& in);

}  // namespace gpulens::kernels

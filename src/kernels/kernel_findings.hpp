// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel view in words (docs/kernels.md): the headline sentence and the
// findings, each a rule over the numbers analysis.cpp computed. Apart from the
// analysis because they only read a finished view, and the rules change on
// their own (thresholds, wording, fixes).
#include <string>
#include <vector>

#include "kernels/analysis.hpp"

namespace gpulens::kernels {

// "How busy the GPU was and where its idle time lies", over the first device's
// marked steps, trace windows or whole activity; "" for a view without devices.
std::string kernel_headline(const KernelView& view);

// The findings, in this order: kernels leaving most SMs idle, the first device's
// idle gaps (host-bound, launch-bound) and synchronisations, pageable copies.
std::vector<Finding> kernel_findings(const KernelView& view);

}  // namespace gpulens::kernels

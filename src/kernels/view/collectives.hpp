// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which kernel rows are collectives (docs/kernels.md): kernel_names.hpp says
// which names are, and why their time is communication, not compute.
#include <vector>

#include "kernels/record/kernel_names.hpp"
#include "kernels/view/view.hpp"

namespace gpulens::kernels {

// Sets KernelRow::collective on each row from its name.
void mark_collectives(std::vector<KernelRow>& rows);

// The share of kernel time in the collective rows (marked above) of `rows`.
double collective_share(const std::vector<KernelRow>& rows);

}  // namespace gpulens::kernels

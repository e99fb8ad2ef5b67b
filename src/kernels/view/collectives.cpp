// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/collectives.hpp"

namespace gpulens::kernels {

void mark_collectives(std::vector<KernelRow>& rows) {
  for (auto& row : rows) row.collective = is_collective(row.name);
}

double collective_share(const std::vector<KernelRow>& rows) {
  double share = 0;
  for (const auto& row : rows) {
    if (row.collective) share += row.share;
  }
  return share;
}

}  // namespace gpulens::kernels

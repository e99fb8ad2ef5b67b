// SPDX-License-Identifier: Apache-2.0
#include "verdict/cost.hpp"

#include <algorithm>

namespace gpulens::verdict {

Cost compute_cost(std::optional<double> price_per_gpu_hour, double gpu_hours, double duration_s,
                  const CostShares& shares) {
  Cost c;
  c.price_per_gpu_hour = price_per_gpu_hour;
  c.gpu_hours = gpu_hours;
  c.duration_h = duration_s / 3600.0;
  if (!price_per_gpu_hour) return c;
  const double price = *price_per_gpu_hour;
  c.total = gpu_hours * price;
  const double edges = std::clamp(shares.edges, 0.0, 1.0);
  c.edges = *c.total * edges;
  if (shares.idle) {
    const double idle = std::clamp(*shares.idle, 0.0, 1.0 - edges);
    c.idle = *c.total * idle;
    if (shares.sm_active) {
      // The SMs work in the working states (a blip in an idle window is noise):
      // they cannot work longer than those states last.
      const double work = 1.0 - edges - idle;
      const double sm = std::clamp(*shares.sm_active, 0.0, work);
      c.inefficiency = *c.total * (work - sm);
      c.useful = *c.total * sm;
    } else {
      c.working_unmeasured = *c.total * (1.0 - edges - idle);
    }
    c.waste = *c.idle + c.inefficiency.value_or(0);
    c.waste_share = *c.total > 0 ? *c.waste / *c.total : 0.0;
  }
  if (c.duration_h > 0) {
    c.monthly_cost = *c.total / c.duration_h * kHoursPerMonth;
    if (c.waste) c.monthly_waste = *c.waste / c.duration_h * kHoursPerMonth;
  }
  return c;
}

}  // namespace gpulens::verdict

#include "verdict/cost.hpp"

#include <algorithm>

namespace gpulens {

Cost compute_cost(std::optional<double> price_per_gpu_hour, double gpu_hours, double duration_s,
                  std::optional<double> kernel_share, std::optional<double> sm_share) {
  Cost c;
  c.price_per_gpu_hour = price_per_gpu_hour;
  c.gpu_hours = gpu_hours;
  c.duration_h = duration_s / 3600.0;
  if (!price_per_gpu_hour) return c;
  const double price = *price_per_gpu_hour;
  c.total = gpu_hours * price;
  if (kernel_share) {
    const double kernel = std::clamp(*kernel_share, 0.0, 1.0);
    c.idle = *c.total * (1.0 - kernel);
    if (sm_share) {
      // SM activity can read a little above utilization (the counters average over
      // different intervals); the SMs cannot work longer than kernels run.
      const double sm = std::clamp(*sm_share, 0.0, kernel);
      c.inefficiency = *c.total * (kernel - sm);
      c.useful = *c.total * sm;
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

}  // namespace gpulens

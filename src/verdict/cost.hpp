#pragma once
// What the GPU time cost, and where the money went: to time with no kernel
// running (idle), to kernels that left the SMs idle (inefficiency), and to SMs
// at work. Pure arithmetic over the funnel; docs/report.md gives the formulas.
#include <optional>
#include <string>

#include "verdict/usage.hpp"

namespace gpulens {

// Hours in an average month (365 x 24 / 12), for "at this rate, per month".
inline constexpr double kHoursPerMonth = 730.0;

struct Cost {
  std::optional<double> price_per_gpu_hour;  // nullopt: no price known, no money figures
  std::string currency = "USD";
  std::string price_source;  // "--price", "data/prices.json: H100 SXM", "config"
  double gpu_hours = 0;
  double duration_h = 0;
  std::optional<double> total;
  std::optional<double> idle;          // paid while no kernel ran
  std::optional<double> inefficiency;  // paid while kernels ran on idle SMs
  std::optional<double> useful;        // paid while SMs worked
  std::optional<double> waste;         // idle + inefficiency
  std::optional<double> waste_share;   // waste / total
  // The waste if jobs like this one ran back to back for a month.
  std::optional<double> monthly_waste;
  std::optional<double> monthly_cost;
};

// Shares are of paid GPU time (the funnel's kernel_active and sm_active). Without
// sm_active, inefficiency is unknown and waste counts idle time only.
Cost compute_cost(std::optional<double> price_per_gpu_hour, double gpu_hours, double duration_s,
                  std::optional<double> kernel_share, std::optional<double> sm_share);

}  // namespace gpulens

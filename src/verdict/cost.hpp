// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the GPU time cost, and where the money went: to the job's start-up and
// tear-down (reported apart, not as waste), to idle time in its steady state,
// to working time with the SMs idle (gaps between kernels, kernels on few SMs:
// inefficiency), and to SMs at work. The idle and edge shares are the states'
// (the same seconds as "What the GPUs were doing"), the SMs at work the funnel's
// SM-active share; docs/report.md gives the formulas.
#include <optional>
#include <string>

#include "verdict/usage.hpp"

namespace gpulens::verdict {

// Hours in an average month (365 x 24 / 12), for "at this rate, per month".
inline constexpr double kHoursPerMonth = 730.0;

struct Cost {
  std::optional<double> price_per_gpu_hour;  // nullopt: no price known, no money figures
  std::string currency = "USD";
  std::string price_source;  // "--price", "data/prices.json: H100 SXM", "config"
  double gpu_hours = 0;
  double duration_h = 0;
  std::optional<double> total;
  std::optional<double> edges;         // start-up and tear-down: paid, not waste
  std::optional<double> idle;          // idle states in the steady state
  std::optional<double> inefficiency;  // working states, SMs idle
  std::optional<double> useful;        // paid while SMs worked
  // Working states when SM activity was not measured (no GPM): paid while kernels
  // ran, how well they used the SMs unknown, so neither useful nor inefficient.
  std::optional<double> working_unmeasured;
  std::optional<double> waste;        // idle + inefficiency
  std::optional<double> waste_share;  // waste / total
  // The waste if jobs like this one ran back to back for a month.
  std::optional<double> monthly_waste;
  std::optional<double> monthly_cost;
};

// Shares of the paid GPU time.
struct CostShares {
  double edges = 0;                 // start-up and tear-down states
  std::optional<double> idle;       // idle states in the steady state; nullopt: not diagnosed
  std::optional<double> sm_active;  // the funnel's SM-active share
};

// Without sm_active, inefficiency is unknown, the working time is priced as
// working_unmeasured, and waste counts idle time only.
Cost compute_cost(std::optional<double> price_per_gpu_hour, double gpu_hours, double duration_s,
                  const CostShares& shares);

}  // namespace gpulens::verdict

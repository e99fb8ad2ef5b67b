#pragma once
// The few fixes that matter most for a whole job: the diagnosis gives fixes per
// state run and per alert; these are ranked by the GPU time they concern.
#include <string>
#include <vector>

#include "diagnosis/timeline.hpp"

namespace gpulens {

// Fixes ranked by the GPU-seconds of the findings behind them (a healthy
// compute_bound run counts for less than a bottleneck; a critical alert for
// more than a warning), one per finding in turn, without repeats. `end` closes
// alerts that were still firing.
std::vector<std::string> top_fixes(const DiagnosisReport& report, double end, std::size_t count);

}  // namespace gpulens

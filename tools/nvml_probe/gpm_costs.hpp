// SPDX-License-Identifier: Apache-2.0
#pragma once
// What GPM's calls cost the driver (gpulens_nvml_probe --call-costs, --gpm-fanout):
// the floor under the sampler's GPM part (docs/nvml-facts.md, bench/overhead).
#include <vector>

#include "sources/nvml/nvml_api.hpp"

namespace gpulens::probe {

// nvmlGpmSampleGet and nvmlGpmMetricsGet (1 and 15 metrics) in tight loops of
// `reps` on one pair, then a fresh pair 100 ms apart as the sampler takes it.
// One JSON line each. `api` has GPM (NvmlApi::has_gpm).
void print_gpm_call_costs(const sources::NvmlApi& api, sources::nvml::Device dev, int reps);

// A fresh GPM pair on every GPU of `only` (empty: all), `rounds` times in each of
// three ways: the first alone, all in turn on one thread, all at once with one
// thread each (the sampler's way). One JSON line per way: the driver's CPU per GPU
// and the wall time of a round. Returns the process's exit code.
int gpm_fanout(int rounds, const std::vector<int>& only);

}  // namespace gpulens::probe

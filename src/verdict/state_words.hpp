// SPDX-License-Identifier: Apache-2.0
#pragma once
// States and alerts as people read them in a sentence ("launch-bound", "idle
// while holding 33 GiB"); ids ("launch_bound") stay in JSON, where programs
// read them.
#include <optional>
#include <string>

#include "diagnosis/state.hpp"

namespace gpulens::verdict {

// "compute-bound", "waiting on another GPU", "idle while holding memory".
std::string state_words(diagnosis::GpuState state);
// With the memory held, where known: "idle while holding 33.4 GiB".
std::string state_words(diagnosis::GpuState state, std::optional<double> held_mib);
// "memory_growth" -> "memory growth".
std::string rule_words(const std::string& rule);

}  // namespace gpulens::verdict

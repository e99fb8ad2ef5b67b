// SPDX-License-Identifier: Apache-2.0
#pragma once
// The "Kernel launches" section of a `gpulens run` report (kernels/view/launch_counts.hpp)
// in the report's three forms. render_report() adds it when the recording has launch
// records.
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/view/launch_counts.hpp"

namespace gpulens::render {

std::string launches_to_text(const kernels::LaunchCounts& c);
nlohmann::ordered_json launches_to_json(const kernels::LaunchCounts& c);
// One <section class="card" id="launches">.
std::string launches_to_html(const kernels::LaunchCounts& c);
// The page with the section put before its closing script.
std::string insert_launches_html(std::string page, const kernels::LaunchCounts& c);

}  // namespace gpulens::render

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The short texts of `gpulens top`'s cells: readings in its compact column style
// (core/text_units points_compact), rate pairs, sizes, GPU names, state labels and
// the style a state is drawn in. Internal to the tui layout.
#include <optional>
#include <string>

#include "tui/layout.hpp"
#include "tui/top_model.hpp"

namespace gpulens::tui {

// "98%", "0.7%"; "-" when absent, "n/a" when the GPU cannot read it.
std::string pct_text(std::optional<double> v, bool unsupported = false);
// A bare number under a heading that says its unit; "-" when absent.
std::string num(std::optional<double> v, const char* spec = "{:.0f}");
// "↓14 ↑5 MiB/s", "↓1.2 ↑0.0 GiB/s": one unit for both directions.
std::string rates(std::optional<double> rx, std::optional<double> tx, bool utf8);
// MiB as a bare GiB number, for the compact view's "MEM GiB" column.
std::string gib(std::optional<double> mib);
// "512M", "12.5G": the RSS column.
std::string mib_short(std::optional<double> mib);
// "NVIDIA H100 80GB HBM3" -> "H100".
std::string short_name(const std::string& name);
// A critical alert outranks the state; otherwise each state has its own colour,
// the one the dashboard and the HTML report use.
Style state_style(const GpuView& g);
// "compute_bound+thr !": the state, throttled, an alert firing.
std::string state_label(const GpuView& g);

}  // namespace gpulens::tui

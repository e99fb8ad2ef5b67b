// SPDX-License-Identifier: Apache-2.0
#pragma once
// The lines of `gpulens top` that show the GPUs: the full view (a head line, bars,
// rates, power, MIG instances, sparklines, why and fix, alerts) or the compact one
// (one line per GPU under a heading). Internal to the tui layout.
#include <cstddef>
#include <vector>

#include "tui/line_builder.hpp"

namespace gpulens::tui {

// Rows the MIG instances of all GPUs take.
std::size_t mig_rows(const TopModel& model);

// The full view in at most `body` rows, keeping room for the process table: the
// extras (alerts, sparklines, more lines of why and fix) only where they fit.
std::vector<Line> full_gpu_lines(const Ctx& c, std::size_t body);

// The compact view: a heading, one line per GPU and its MIG instances, and the
// state in words with the fix when the table still keeps four rows.
std::vector<Line> compact_gpu_lines(const Ctx& c, std::size_t body);

}  // namespace gpulens::tui

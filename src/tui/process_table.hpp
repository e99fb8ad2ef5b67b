// SPDX-License-Identifier: Apache-2.0
#pragma once
// The process table of `gpulens top`: its heading (which sorts on a click), its
// rows scrolled so that the selected one shows, and what it says when empty.
// Internal to the tui layout; `click` (layout.hpp) reads the hits it leaves.
#include <cstddef>

#include "tui/line_builder.hpp"

namespace gpulens::tui {

// The table in `rows` rows below its heading, appended to `screen`, whose
// `table` records where the heading and each row landed.
void add_process_table(const Ctx& c, std::size_t rows, Screen& screen);

}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The frame of `gpulens top`'s screen: the title line (host, driver, where the
// ticks come from), the footer (keys, a message, the signal confirmation or the
// filter being typed) and the help screen. Internal to the tui layout.
#include <vector>

#include "tui/line_builder.hpp"

namespace gpulens::tui {

Line title_line(const Ctx& c, const FeedStatus& feed);
Line footer_line(const Ctx& c);
std::vector<Line> help_lines(const Ctx& c);

}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text measured and cut in terminal columns, and the glyph pieces of `gpulens
// top` (bars, sparklines): pure functions, the layout's only notion of width.
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulens::tui {

// Columns a UTF-8 string takes (one per code point: every glyph used is narrow).
std::size_t text_width(std::string_view s);
// Cut to `width` columns (the last one an ellipsis when cut) and pad with spaces.
std::string fit(std::string_view s, std::size_t width, bool utf8 = true);
// Word-wrapped into at most `max_lines` lines of `width` columns; the last one ends
// in an ellipsis when text was left over.
std::vector<std::string> wrap(std::string_view text, std::size_t width, std::size_t max_lines,
                              bool utf8 = true);
// A 0..100 reading as a bar of `width` cells (eighths of a cell in UTF-8).
std::string bar(std::optional<double> pct, std::size_t width, bool utf8);
// The newest `width` readings as a sparkline, right-aligned; a gap is a space.
std::string sparkline(const std::deque<std::optional<double>>& history, std::size_t width,
                      bool utf8);

}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every line builder of `gpulens top` shares: LineBuilder, which keeps a line
// within the screen and makes its text terminal-safe, and the context a builder
// reads (model, view state, width, glyphs). Internal to the tui layout.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "core/text_safety.hpp"
#include "tui/layout.hpp"
#include "tui/text_fit.hpp"

namespace gpulens::tui {

// Builds one line, never wider than the screen. Every span of every screen comes
// through add(), which makes its text terminal_safe first: process, user, host and
// GPU names are chosen by others, and the width is counted on what is shown.
class LineBuilder {
 public:
  explicit LineBuilder(std::size_t width, bool utf8) : width_(width), utf8_(utf8) {}
  LineBuilder& add(std::string_view raw, Style style = Style::Normal) {
    if (used_ >= width_ || raw.empty()) return *this;
    const std::string text = terminal_safe(raw);
    const std::size_t w = text_width(text);
    std::string piece = w <= width_ - used_ ? std::string(text) : fit(text, width_ - used_, utf8_);
    used_ += text_width(piece);
    if (!line_.spans.empty() && line_.spans.back().style == style) {
      line_.spans.back().text += piece;
    } else {
      line_.spans.push_back({std::move(piece), style});
    }
    return *this;
  }
  // Spaces up to column `col`.
  LineBuilder& to(std::size_t col, Style style = Style::Normal) {
    if (col > used_) add(std::string(std::min(col, width_) - used_, ' '), style);
    return *this;
  }
  // Right-aligns `text` at the end of the line, when it fits beside what is there.
  LineBuilder& right(std::string_view text, Style style, Style fill = Style::Normal) {
    const std::size_t w = text_width(text);
    if (used_ + w + 1 > width_) return *this;
    to(width_ - w, fill);
    return add(text, style);
  }
  std::size_t used() const { return used_; }
  std::size_t left() const { return width_ - used_; }
  Line done(Style pad = Style::Normal, bool fill = false) {
    if (fill) to(width_, pad);
    return std::move(line_);
  }

 private:
  std::size_t width_;
  bool utf8_;
  std::size_t used_ = 0;
  Line line_;
};

struct Ctx {
  const TopModel& model;
  const ViewState& view;
  std::size_t width;
  bool utf8;
  LineBuilder line() const { return LineBuilder(width, utf8); }
};

}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ncurses side of `gpulens top`: paints a laid-out Screen and reads keys.
// Everything about what is shown lives in layout.cpp; this file only maps styles
// to colours (or to bold/reverse on monochrome and NO_COLOR terminals).
#include <memory>
#include <string>
#include <utility>

#include "core/result.hpp"
#include "tui/layout.hpp"

namespace gpulens::tui {

struct CursesOptions {
  bool color = true;   // false: attributes only (NO_COLOR, --no-color)
  bool ascii = false;  // no block glyphs even on a UTF-8 terminal
  bool mouse = false;  // clicks and the wheel (the terminal's own selection then needs Shift)
};

class CursesScreen {
 public:
  // Takes over the terminal (stdin/stdout); fails on an unknown TERM.
  static Result<std::unique_ptr<CursesScreen>> open(const CursesOptions& options);
  ~CursesScreen();
  CursesScreen(const CursesScreen&) = delete;
  CursesScreen& operator=(const CursesScreen&) = delete;

  void draw(const Screen& screen);
  // The next key already typed, as a key:: code or a character; -1 when none.
  int poll_key();
  // Where the last key::kClick was (column, row).
  std::pair<int, int> last_click() const { return click_; }
  int width() const;
  int height() const;
  TerminalCaps caps() const { return caps_; }
  bool colors() const { return colors_; }

 private:
  CursesScreen() = default;
  void init_styles(bool color);
  TerminalCaps caps_;
  std::pair<int, int> click_{-1, -1};
  bool colors_ = false;
  int attrs_[static_cast<int>(Style::Count)] = {};
  struct Term;
  Term* term_ = nullptr;
};

// True when NO_COLOR is set to anything non-empty (https://no-color.org).
bool no_color_requested();
// True when the locale's character set is UTF-8 (call after setlocale).
bool locale_is_utf8();

}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
#include "tui/curses_screen.hpp"

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <langinfo.h>

#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/text_safety.hpp"
#include "diagnosis/state_colour.hpp"
#include "tui/layout.hpp"
#include "tui/view_state.hpp"

namespace gpulens::tui {

struct CursesScreen::Term {
  SCREEN* screen = nullptr;
};

bool no_color_requested() {
  const char* v = std::getenv("NO_COLOR");
  return v != nullptr && *v != '\0';
}

bool locale_is_utf8() {
  const char* cs = nl_langinfo(CODESET);
  return cs != nullptr && (std::strcmp(cs, "UTF-8") == 0 || std::strcmp(cs, "utf8") == 0);
}

Result<std::unique_ptr<CursesScreen>> CursesScreen::open(const CursesOptions& options) {
  std::setlocale(LC_ALL, "");
  std::unique_ptr<CursesScreen> s(new CursesScreen());
  s->term_ = new Term();
  s->term_->screen = newterm(nullptr, stdout, stdin);
  if (s->term_->screen == nullptr) {
    const char* term = std::getenv("TERM");
    return Error{std::string("cannot use the terminal '") + (term ? term : "") +
                 "' (no terminfo entry?); try TERM=xterm or gpulens top --once"};
  }
  set_term(s->term_->screen);
  // A terminal that cannot move the cursor (dumb, some CI logs) would get the screen
  // as a stream of text: refuse it and point at the line-based views.
  const char* cup = tigetstr("cup");
  if (cup == nullptr || cup == reinterpret_cast<const char*>(-1)) {
    const char* term = std::getenv("TERM");
    return Error{std::string("the terminal '") + (term ? term : "") +
                 "' cannot move the cursor; use gpulens top --once or gpulens stream"};
  }
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  nodelay(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);
  s->caps_.utf8 = locale_is_utf8() && !options.ascii;
  if (options.mouse) {
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, nullptr);
    mouseinterval(0);  // report presses at once instead of waiting to pair them into clicks
  }
  s->init_styles(options.color && has_colors());
  return s;
}

CursesScreen::~CursesScreen() {
  if (term_ != nullptr && term_->screen != nullptr) {
    endwin();
    delscreen(term_->screen);
  }
  delete term_;
}

void CursesScreen::init_styles(bool color) {
  auto at = [this](Style s) -> int& { return attrs_[static_cast<int>(s)]; };
  at(Style::Normal) = A_NORMAL;
  at(Style::Title) = A_REVERSE | A_BOLD;
  at(Style::Header) = A_BOLD;
  at(Style::Dim) = A_DIM;
  at(Style::Good) = A_NORMAL;
  at(Style::Warn) = A_BOLD;
  at(Style::Bad) = A_BOLD | A_UNDERLINE;
  at(Style::UtilBar) = A_NORMAL;
  at(Style::SmBar) = A_BOLD;
  at(Style::Selected) = A_REVERSE;
  at(Style::Footer) = A_REVERSE;
  for (const diagnosis::GpuState st : diagnosis::all_states()) {
    // Without colour: idle states dim, the working ones plain, the held-back ones bold.
    const bool quiet = st == diagnosis::GpuState::Unknown || st == diagnosis::GpuState::Idle ||
                       st == diagnosis::GpuState::IdleHoldingMemory;
    const bool working = st == diagnosis::GpuState::ComputeBound || st == diagnosis::GpuState::Busy;
    at(state_style_of(st)) = quiet ? A_DIM : working ? A_NORMAL : A_BOLD;
  }
  colors_ = color;
  if (!color) return;
  start_color();
  use_default_colors();
  enum Pair : short { kTitle = 1, kGood, kWarn, kBad, kUtil, kSm, kDim };
  init_pair(kTitle, COLOR_BLACK, COLOR_CYAN);
  init_pair(kGood, COLOR_GREEN, -1);
  init_pair(kWarn, COLOR_YELLOW, -1);
  init_pair(kBad, COLOR_RED, -1);
  init_pair(kUtil, COLOR_BLUE, -1);
  init_pair(kSm, COLOR_GREEN, -1);
  init_pair(kDim, COLOR_WHITE, -1);
  at(Style::Title) = static_cast<int>(COLOR_PAIR(kTitle) | A_BOLD);
  at(Style::Good) = static_cast<int>(COLOR_PAIR(kGood) | A_BOLD);
  at(Style::Warn) = static_cast<int>(COLOR_PAIR(kWarn) | A_BOLD);
  at(Style::Bad) = static_cast<int>(COLOR_PAIR(kBad) | A_BOLD);
  at(Style::UtilBar) = static_cast<int>(COLOR_PAIR(kUtil));
  at(Style::SmBar) = static_cast<int>(COLOR_PAIR(kSm) | A_BOLD);
  at(Style::Footer) = static_cast<int>(COLOR_PAIR(kTitle));
  // The states' colours: the nearest xterm-256 colour where the terminal has
  // 256, else one of the eight basic colours with or without bold.
  short pair = kDim + 1;
  for (const diagnosis::GpuState st : diagnosis::all_states()) {
    const diagnosis::StateColour& c = diagnosis::state_colour(st);
    const bool wide = COLORS >= 256;
    init_pair(pair, wide ? c.xterm256 : static_cast<short>(c.ansi8), -1);
    at(state_style_of(st)) =
        static_cast<int>(COLOR_PAIR(pair) | (wide || c.bold ? A_BOLD : A_NORMAL));
    ++pair;
  }
}

void CursesScreen::draw(const Screen& screen) {
  erase();
  int row = 0;
  for (const Line& line : screen.lines) {
    move(row, 0);
    for (const Span& span : line.spans) {
      attrset(static_cast<attr_t>(attrs_[static_cast<int>(span.style)]));
      // The painter refuses controls itself, whoever built the span: a name
      // chosen by another user must not reach the terminal as an escape.
      const std::string text = terminal_safe(span.text);
      // The bottom-right cell cannot be written without scrolling; curses reports
      // ERR there and leaves the rest of the screen as drawn.
      addnstr(text.c_str(), static_cast<int>(text.size()));
    }
    ++row;
  }
  attrset(A_NORMAL);
  refresh();
}

int CursesScreen::poll_key() {
  const int ch = getch();
  switch (ch) {
    case ERR:
      return -1;
    case KEY_UP:
      return key::kUp;
    case KEY_DOWN:
      return key::kDown;
    case KEY_PPAGE:
      return key::kPageUp;
    case KEY_NPAGE:
      return key::kPageDown;
    case KEY_HOME:
      return key::kHome;
    case KEY_END:
      return key::kEnd;
    case KEY_BACKSPACE:
      return key::kBackspace;
    case KEY_RESIZE:
      return key::kResize;
    case KEY_MOUSE: {
      MEVENT ev{};
      if (getmouse(&ev) != OK) return 0;
      if ((ev.bstate & BUTTON4_PRESSED) != 0) return key::kUp;
      if ((ev.bstate & BUTTON5_PRESSED) != 0) return key::kDown;
      if ((ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) == 0) return 0;
      click_ = {ev.x, ev.y};
      return key::kClick;
    }
    case KEY_ENTER:
    case '\r':
      return key::kEnter;
    default:
      return ch;
  }
}

int CursesScreen::width() const {
  return COLS;
}
int CursesScreen::height() const {
  return LINES;
}

}  // namespace gpulens::tui

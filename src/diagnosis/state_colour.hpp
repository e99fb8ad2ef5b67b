// SPDX-License-Identifier: Apache-2.0
#pragma once
// One colour per diagnosis state, shared by every view: the HTML report, the web
// dashboard (web/src/format.js repeats the hex values; a unit test holds them
// equal) and `gpulens top` (the nearest xterm-256 colour, or one of the eight
// basic colours plus bold on an 8-colour terminal). docs/dashboard.md has the table.
#include <string_view>

#include "diagnosis/state.hpp"

namespace gpulens::diagnosis {

// The eight basic terminal colours, numbered as curses' COLOR_* constants.
enum class Ansi8 : short { Black, Red, Green, Yellow, Blue, Magenta, Cyan, White };

struct StateColour {
  std::string_view hex;  // "#22a06b"
  short xterm256;        // nearest xterm-256 palette index
  Ansi8 ansi8;           // on an 8-colour terminal...
  bool bold;             // ...with bold, so no two states look the same
};

const StateColour& state_colour(GpuState state);

}  // namespace gpulens::diagnosis

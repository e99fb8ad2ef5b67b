// SPDX-License-Identifier: Apache-2.0
#pragma once
// The screen of `gpulens top` as styled text lines, from the model, the view state
// and the terminal's size. Pure: the same input gives the same screen, so the
// layout is tested directly and the ncurses side only paints spans. The driver
// (layout.cpp) fills the screen from its parts: the frame (screen_frame.*: title,
// footer, help), the GPUs (gpu_lines.*), the process table (process_table.*), each
// built line by line (line_builder.hpp, cell_text.*, text_fit.*).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnosis/state.hpp"
#include "tui/text_fit.hpp"
#include "tui/top_model.hpp"
#include "tui/view_state.hpp"

namespace gpulens::tui {

// What a span means; the drawing layer maps meanings to colours or, on a
// monochrome or NO_COLOR terminal, to bold/reverse only.
enum class Style : std::uint8_t {
  Normal,
  Title,     // top line
  Header,    // table headings, GPU names
  Dim,       // secondary text
  Good,      // compute-bound: the GPU works
  Warn,      // something holds the GPU back
  Bad,       // critical alerts, a pending signal
  UtilBar,   // the classic utilization
  SmBar,     // SM activity: the truth beside it
  Selected,  // the selected process
  Footer,    // key help at the bottom
  // One per GpuState, in its order: the state's own colour (diagnosis/state_colour).
  StateUnknown,
  StateIdle,
  StateIdleHoldingMemory,
  StateComputeBound,
  StateMemoryBound,
  StateInterconnectBound,
  StatePcieBound,
  StateHostBound,
  StateLaunchBound,
  StateSmUnderused,
  StateWaitingOnPeer,
  StateBusy,
  Count
};

// The style that draws a state in its own colour.
Style state_style_of(diagnosis::GpuState state);

struct Span {
  std::string text;
  Style style = Style::Normal;
};

struct Line {
  std::vector<Span> spans;
  std::string text() const;  // the spans joined
};

// Where the process table landed, for mouse clicks.
struct TableHits {
  int heading_row = -1;                                // -1: no table on screen
  std::vector<std::pair<std::size_t, SortKey>> heads;  // each heading's end column, in order
  std::vector<std::uint32_t> row_pids;                 // the rows below the heading
};

struct Screen {
  int width = 0;
  int height = 0;
  std::vector<Line> lines;  // at most `height`, each at most `width` columns
  TableHits table;
};

struct TerminalCaps {
  bool utf8 = true;  // block glyphs and arrows; ASCII stand-ins otherwise
};

// Where the ticks come from, for the title line.
struct FeedStatus {
  bool live = true;
  double speed = 1.0;  // replay pacing
  bool ended = false;  // the recording is over (or --count reached)
  std::string error;   // the source failed: shown instead of the time
  // Where the GPUs' owners come from processes though a scheduler's word was
  // expected (sources::allocation_fallback_note); shown where it fits.
  std::string note;
  // --once on a recording: its first and last tick, so that the title says which
  // moment of it is shown ("at 19:30:12, 1m30s into the recording of 4m00s").
  std::optional<double> first_t, last_t;
};

Screen layout_top(const TopModel& model, const ViewState& view, const FeedStatus& feed, int width,
                  int height, TerminalCaps caps);

// A mouse click at column x, row y: a heading sorts by its column (again: reverses),
// a row selects its process.
KeyAction click(ViewState& view, const Screen& screen, int x, int y);

// The screen as plain text, one line each, trailing spaces removed (for --once).
std::string screen_text(const Screen& screen);

}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
#include "tui/layout.hpp"

#include <algorithm>
#include <utility>

#include "core/text_safety.hpp"
#include "tui/gpu_lines.hpp"
#include "tui/line_builder.hpp"
#include "tui/process_table.hpp"
#include "tui/screen_frame.hpp"

namespace gpulens::tui {

Style state_style_of(diagnosis::GpuState state) {
  static_assert(static_cast<int>(Style::StateBusy) - static_cast<int>(Style::StateUnknown) + 1 ==
                static_cast<int>(diagnosis::kGpuStateCount));
  return static_cast<Style>(static_cast<int>(Style::StateUnknown) +
                            static_cast<int>(diagnosis::state_index(state)));
}

namespace {

bool use_full(const Ctx& c, std::size_t body_rows) {
  if (c.view.density == Density::Compact) return false;
  if (c.view.density == Density::Full) return true;
  const std::size_t n = std::max<std::size_t>(c.model.gpus.size(), 1);
  const std::size_t min_procs = 4;  // heading and three rows
  return c.width >= 60 && n * 6 + mig_rows(c.model) + min_procs <= body_rows;
}

// Up to `rows` of `lines` moved onto the screen; how many moved.
std::size_t take_lines(std::vector<Line>& lines, std::size_t rows, Screen& screen) {
  const std::size_t n = std::min(lines.size(), rows);
  for (std::size_t i = 0; i < n; ++i) screen.lines.push_back(std::move(lines[i]));
  return n;
}

}  // namespace

std::string Line::text() const {
  std::string s;
  for (const auto& span : spans) append_terminal_safe(s, span.text, false);
  return s;
}

// The title, then the help screen or the GPUs with the process table in what they
// leave, blank lines down to the footer.
Screen layout_top(const TopModel& model, const ViewState& view, const FeedStatus& feed, int width,
                  int height, TerminalCaps caps) {
  Screen screen;
  screen.width = std::max(width, 1);
  screen.height = std::max(height, 1);
  const Ctx c{model, view, static_cast<std::size_t>(screen.width), caps.utf8};
  const auto rows = static_cast<std::size_t>(screen.height);
  screen.lines.push_back(title_line(c, feed));
  if (rows < 3) return screen;
  const std::size_t body = rows - 2;  // title and footer
  if (view.help) {
    auto help = help_lines(c);
    take_lines(help, body, screen);
  } else {
    auto gpus = use_full(c, body) ? full_gpu_lines(c, body) : compact_gpu_lines(c, body);
    const std::size_t gpu_rows = take_lines(gpus, body, screen);
    if (body > gpu_rows + 1) add_process_table(c, body - gpu_rows - 1, screen);
  }
  while (screen.lines.size() < rows - 1) screen.lines.push_back(Line{});
  screen.lines.push_back(footer_line(c));
  return screen;
}

std::string screen_text(const Screen& screen) {
  std::string out;
  for (const auto& line : screen.lines) {
    std::string t = line.text();
    while (!t.empty() && t.back() == ' ') t.pop_back();
    out += t;
    out += '\n';
  }
  return out;
}

}  // namespace gpulens::tui

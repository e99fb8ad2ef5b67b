// SPDX-License-Identifier: Apache-2.0
#include "tui/process_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "tui/cell_text.hpp"

namespace gpulens::tui {
namespace {

struct ProcCols {
  bool container = false;  // the JOB/CONTAINER column
  bool slurm = false;      // some process is in a Slurm job: the column is headed SLURM JOB
};

Line proc_header(const Ctx& c, const ProcCols& cols, std::size_t shown, std::size_t total,
                 TableHits& hits) {
  auto b = c.line();
  const char* arrow = c.view.descending ? (c.utf8 ? "\u25bc" : "v") : (c.utf8 ? "\u25b2" : "^");
  auto head = [&](SortKey k, std::string text, int w) {
    if (k == c.view.sort) text += arrow;
    const std::string cell =
        w < 0 ? fmt::format("{:<{}}", text, -w) : fmt::format("{:>{}}", text, w);
    b.add(cell, k == c.view.sort ? Style::Selected : Style::Header);
    b.add(" ", Style::Header);
    hits.heads.emplace_back(b.used(), k);
  };
  head(SortKey::Pid, "PID", 7);
  head(SortKey::User, "USER", -8);
  head(SortKey::Gpu, "GPU", 4);
  head(SortKey::Mem, "GPU-MEM", 8);
  head(SortKey::Sm, "SM%", 5);
  head(SortKey::Cpu, "CPU%", 6);
  head(SortKey::Rss, "RSS", 7);
  if (cols.container) head(SortKey::Container, cols.slurm ? "SLURM JOB" : "CONTAINER", -12);
  head(SortKey::Command, "COMMAND", -8);
  std::string count = shown == total ? fmt::format("{} processes", total)
                                     : fmt::format("{} of {} processes", shown, total);
  if (!c.view.filter.empty()) count += " matching '" + c.view.filter + "'";
  b.right(count + " ", Style::Header, Style::Header);
  return b.done(Style::Header, true);
}

Line proc_line(const Ctx& c, const ProcCols& cols, const ProcView& p, bool selected) {
  auto b = c.line();
  const Style st = selected ? Style::Selected : Style::Normal;
  b.add(fmt::format("{:>7} {:<8} {:>4} {:>8} {:>5} {:>6} {:>7} ", p.pid, fit(p.user, 8, c.utf8),
                    p.gpu, p.mem_mib ? num(p.mem_mib) + "MiB" : "-", num(p.sm_pct),
                    num(p.cpu_pct, "{:.1f}"), mib_short(p.rss_mib)),
        st);
  if (cols.container) b.add(fit(where_label(p), 12, c.utf8) + " ", st);
  b.add(p.command, st);
  return b.done(st, selected);
}

const char* empty_table_text(const TopModel& model) {
  if (!model.procs.empty()) return "  no process matches the filter";
  return model.procs_listed ? "  no processes on these GPUs"
                            : "  processes not listed (yet, or --no-procs)";
}

}  // namespace

void add_process_table(const Ctx& c, std::size_t rows, Screen& screen) {
  const TopModel& model = c.model;
  const auto procs = visible_processes(model.procs, c.view);
  ProcCols cols;
  cols.slurm = std::any_of(model.procs.begin(), model.procs.end(),
                           [](const ProcView& p) { return !p.job.empty(); });
  cols.container =
      cols.slurm || std::any_of(model.procs.begin(), model.procs.end(),
                                [](const ProcView& p) { return !p.container.empty(); });
  auto& lines = screen.lines;
  screen.table.heading_row = static_cast<int>(lines.size());
  lines.push_back(proc_header(c, cols, procs.size(), model.procs.size(), screen.table));
  std::size_t selected = procs.size();
  for (std::size_t i = 0; i < procs.size(); ++i) {
    if (c.view.selected_pid && procs[i].pid == *c.view.selected_pid) selected = i;
  }
  // Scroll so that the selected row is on screen.
  std::size_t first = 0;
  if (selected < procs.size() && selected >= rows) first = selected - rows + 1;
  for (std::size_t i = first; i < procs.size() && i < first + rows; ++i) {
    lines.push_back(proc_line(c, cols, procs[i], i == selected));
    screen.table.row_pids.push_back(procs[i].pid);
  }
  if (procs.empty()) lines.push_back(c.line().add(empty_table_text(model), Style::Dim).done());
}

KeyAction click(ViewState& view, const Screen& screen, int x, int y) {
  const TableHits& t = screen.table;
  if (t.heading_row < 0 || y < t.heading_row || view.help || view.confirm) return {};
  if (y == t.heading_row) {
    for (const auto& [end, k] : t.heads) {
      if (static_cast<std::size_t>(std::max(x, 0)) < end) {
        if (view.sort == k) {
          view.descending = !view.descending;
        } else {
          view.sort = k;
        }
        return {KeyAction::Redraw, {}};
      }
    }
    return {};
  }
  const auto row = static_cast<std::size_t>(y - t.heading_row - 1);
  if (row >= t.row_pids.size()) return {};
  view.selected_pid = t.row_pids[row];
  return {KeyAction::Redraw, {}};
}

}  // namespace gpulens::tui

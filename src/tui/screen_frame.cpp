// SPDX-License-Identifier: Apache-2.0
#include "tui/screen_frame.hpp"

#include <fmt/format.h>

#include <csignal>
#include <ctime>
#include <string>
#include <utility>

#include "core/text_units.hpp"

namespace gpulens::tui {
namespace {

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGKILL:
      return "SIGKILL";
    case SIGINT:
      return "SIGINT";
    default:
      return "signal";
  }
}

std::string clock_text(time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

}  // namespace

Line title_line(const Ctx& c, const FeedStatus& feed) {
  auto b = c.line();
  b.add(" gpulens top", Style::Title);
  std::string info;
  if (!c.model.host.empty()) info += "  " + c.model.host;
  if (!c.model.driver.empty()) info += "  driver " + c.model.driver;
  info += fmt::format("  {} GPU{}", c.model.gpus.size(), c.model.gpus.size() == 1 ? "" : "s");
  b.add(info, Style::Title);
  std::string status;
  if (!feed.error.empty()) {
    status = "error: " + feed.error;
  } else if (!feed.live && feed.first_t && feed.last_t) {
    // Which moment of the recording: in words where they fit, else in short.
    const std::string clock = clock_text(static_cast<time_t>(c.model.t));
    const std::string length = duration_compact(*feed.last_t - *feed.first_t);
    const bool end = c.model.t >= *feed.last_t;
    const std::string into = duration_compact(c.model.t - *feed.first_t);
    status = end ? "at " + clock + ", the end of the recording (" + length + ")"
                 : "at " + clock + ", " + into + " into the recording of " + length;
    if (b.used() + text_width(status) + 2 > c.width) {
      status = clock + (end ? "  end of recording" : "  " + into + " of " + length);
    }
  } else {
    if (c.model.t > 0) status = clock_text(static_cast<time_t>(c.model.t));
    if (!feed.live) {
      if (feed.ended) {
        status += "  end of recording";
      } else if (feed.speed == 0) {
        status += "  replay";
      } else {
        status += fmt::format("  replay x{:g}", feed.speed);
      }
    }
  }
  // A scheduler's word missing: said before the time where the line has room,
  // never at the cost of the time.
  if (!feed.note.empty() && feed.error.empty() &&
      b.used() + text_width(feed.note) + text_width(status) + 4 <= c.width) {
    status = feed.note + "  " + status;
  }
  b.right(status + " ", Style::Title, Style::Title);
  return b.done(Style::Title, true);
}

Line footer_line(const Ctx& c) {
  auto b = c.line();
  const ViewState& v = c.view;
  if (v.confirm) {
    b.add(fmt::format(" Send {} to PID {} ({}) on GPU {}? y/n ", signal_name(v.confirm->signal),
                      v.confirm->pid, v.confirm->command, v.confirm->gpu),
          Style::Bad);
    return b.done(Style::Bad, true);
  }
  if (v.editing_filter) {
    b.add(" filter: ", Style::Footer).add(v.filter_draft + "_", Style::Footer);
    b.add("   Enter keep  Esc clear", Style::Footer);
    return b.done(Style::Footer, true);
  }
  if (!v.message.empty()) b.add(" " + v.message + " ", Style::Warn);
  const char* arrows = c.utf8 ? "\u2191\u2193" : "j/k";
  b.add(fmt::format(" q quit  ? help  / filter  <> sort  r reverse  {} select  T/K/I signal  "
                    "c view",
                    arrows),
        Style::Footer);
  return b.done(Style::Footer, true);
}

std::vector<Line> help_lines(const Ctx& c) {
  const std::string signal_keys =
      c.view.signals_off.empty()
          ? "send SIGTERM / SIGKILL / SIGINT to the selected process, after y/n"
          : "off: " + c.view.signals_off;
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"q", "quit"},
      {"?  h", "this help (any key closes it)"},
      {"/",
       "filter processes by text (PID, user, command, container, Slurm job; Enter keeps, Esc "
       "clears)"},
      {"<  >  ,  .", "sort by the previous / next column"},
      {"r", "reverse the sort order"},
      {"Up Down j k", "select a process (PgUp PgDn Home End)"},
      {"T  K  I", signal_keys},
      {"c  a", "compact (one line per GPU) or full view; a = choose by terminal size"},
      {"Esc", "clear the filter and the selection"},
  };
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"util", "NVML utilization: share of time any kernel ran (the classic number)"},
      {"SM act", "GPM SM activity: share of the SMs that worked. 1 busy SM of 132 reads 0.8 %"},
      {"tensor dram occ", "tensor pipes busy, DRAM bandwidth used, warps resident"},
      {"state", "what holds the GPU back, from the same engine as stream and diagnose"},
      {"+thr", "clocks held down by power or heat (reason after the SM clock)"},
      {"!", "an alert is firing; its message is listed under the GPU"},
  };
  std::vector<Line> out;
  out.push_back(c.line().add(" Keys", Style::Header).done(Style::Header, true));
  for (const auto& [k, what] : keys) {
    out.push_back(c.line().add(fmt::format("  {:<14}", k), Style::Header).add(what).done());
  }
  out.push_back(Line{});
  out.push_back(c.line().add(" Columns", Style::Header).done(Style::Header, true));
  for (const auto& [k, what] : columns) {
    out.push_back(c.line().add(fmt::format("  {:<16}", k), Style::Header).add(what).done());
  }
  out.push_back(Line{});
  out.push_back(c.line()
                    .add("  Colours follow NO_COLOR; --ascii avoids block glyphs. Any key returns.",
                         Style::Dim)
                    .done());
  return out;
}

}  // namespace gpulens::tui

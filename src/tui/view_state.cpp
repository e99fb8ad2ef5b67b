// SPDX-License-Identifier: Apache-2.0
#include "tui/view_state.hpp"

#include <algorithm>
#include <cctype>
#include <csignal>

namespace gpulens::tui {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool matches(const ProcView& p, const std::string& needle) {
  if (needle.empty()) return true;
  const std::string hay =
      lower(std::to_string(p.pid) + ' ' + p.user + ' ' + p.command + ' ' + p.container + ' ' +
            p.job + ' ' + p.account + " gpu" + std::to_string(p.gpu));
  return hay.find(lower(needle)) != std::string::npos;
}

// Absent numbers sort below every present one, whichever the direction.
int compare_opt(const std::optional<double>& a, const std::optional<double>& b) {
  if (a && b) return *a < *b ? -1 : (*a > *b ? 1 : 0);
  if (a) return 1;
  if (b) return -1;
  return 0;
}

int compare(const ProcView& a, const ProcView& b, SortKey k) {
  switch (k) {
    case SortKey::Pid:
      return a.pid < b.pid ? -1 : (a.pid > b.pid ? 1 : 0);
    case SortKey::User:
      return a.user.compare(b.user);
    case SortKey::Gpu:
      return a.gpu - b.gpu;
    case SortKey::Mem:
      return compare_opt(a.mem_mib, b.mem_mib);
    case SortKey::Sm:
      return compare_opt(a.sm_pct, b.sm_pct);
    case SortKey::Cpu:
      return compare_opt(a.cpu_pct, b.cpu_pct);
    case SortKey::Rss:
      return compare_opt(a.rss_mib, b.rss_mib);
    case SortKey::Container:
      return where_label(a).compare(where_label(b));
    case SortKey::Command:
    case SortKey::Count:
      return a.command.compare(b.command);
  }
  return 0;
}

int selected_index(const ViewState& view, const std::vector<ProcView>& visible) {
  if (!view.selected_pid) return -1;
  for (std::size_t i = 0; i < visible.size(); ++i) {
    if (visible[i].pid == *view.selected_pid) return static_cast<int>(i);
  }
  return -1;
}

void select_index(ViewState& view, const std::vector<ProcView>& visible, int index) {
  if (visible.empty()) {
    view.selected_pid.reset();
    return;
  }
  index = std::clamp(index, 0, static_cast<int>(visible.size()) - 1);
  view.selected_pid = visible[static_cast<std::size_t>(index)].pid;
}

KeyAction edit_filter(ViewState& view, int k) {
  if (k == key::kEnter || k == '\r') {
    view.filter = view.filter_draft;
    view.editing_filter = false;
  } else if (k == key::kEscape) {
    view.editing_filter = false;
    view.filter.clear();
    view.filter_draft.clear();
  } else if (k == key::kBackspace || k == 127 || k == 8) {
    if (!view.filter_draft.empty()) view.filter_draft.pop_back();
  } else if (k >= 32 && k < 127) {
    view.filter_draft.push_back(static_cast<char>(k));
  } else {
    return {};
  }
  return {KeyAction::Redraw, {}};
}

KeyAction answer_confirm(ViewState& view, int k) {
  PendingSignal pending = *view.confirm;
  view.confirm.reset();
  if (k == 'y' || k == 'Y') return {KeyAction::Signal, pending};
  view.message = "cancelled";
  return {KeyAction::Redraw, {}};
}

}  // namespace

const char* sort_key_name(SortKey k) {
  static constexpr const char* names[] = {"PID",  "USER", "GPU",       "GPU-MEM", "SM%",
                                          "CPU%", "RSS",  "CONTAINER", "COMMAND"};
  return names[static_cast<int>(k) % static_cast<int>(SortKey::Count)];
}

std::vector<ProcView> visible_processes(const std::vector<ProcView>& all, const ViewState& view) {
  const std::string& needle = view.editing_filter ? view.filter_draft : view.filter;
  std::vector<ProcView> out;
  for (const auto& p : all) {
    if (matches(p, needle)) out.push_back(p);
  }
  std::stable_sort(out.begin(), out.end(), [&](const ProcView& a, const ProcView& b) {
    const int c = compare(a, b, view.sort);
    if (c != 0) return view.descending ? c > 0 : c < 0;
    if (a.gpu != b.gpu) return a.gpu < b.gpu;
    return a.pid < b.pid;
  });
  return out;
}

KeyAction handle_key(ViewState& view, int k, const std::vector<ProcView>& visible) {
  view.message.clear();
  if (k == key::kResize) return {KeyAction::Redraw, {}};
  if (view.confirm) return answer_confirm(view, k);
  if (view.editing_filter) return edit_filter(view, k);
  if (view.help) {
    if (k == 'q' || k == 'Q') return {KeyAction::Quit, {}};
    view.help = false;  // any other key closes the help screen
    return {KeyAction::Redraw, {}};
  }
  const int count = static_cast<int>(SortKey::Count);
  const int current = selected_index(view, visible);
  switch (k) {
    case 'q':
    case 'Q':
      return {KeyAction::Quit, {}};
    case '?':
    case 'h':
      view.help = true;
      break;
    case '/':
      view.editing_filter = true;
      view.filter_draft = view.filter;
      break;
    case key::kEscape:
      view.filter.clear();
      view.selected_pid.reset();
      break;
    case '>':
    case '.':
      view.sort = static_cast<SortKey>((static_cast<int>(view.sort) + 1) % count);
      break;
    case '<':
    case ',':
      view.sort = static_cast<SortKey>((static_cast<int>(view.sort) + count - 1) % count);
      break;
    case 'r':
      view.descending = !view.descending;
      break;
    case 'c':
      view.density = view.density == Density::Compact ? Density::Full : Density::Compact;
      break;
    case 'a':
      view.density = Density::Auto;
      break;
    case key::kDown:
    case 'j':
      select_index(view, visible, current < 0 ? 0 : current + 1);
      break;
    case key::kUp:
    case 'k':
      select_index(view, visible, current < 0 ? 0 : current - 1);
      break;
    case key::kPageDown:
      select_index(view, visible, std::max(current, 0) + view.page_rows);
      break;
    case key::kPageUp:
      select_index(view, visible, std::max(current, 0) - view.page_rows);
      break;
    case key::kHome:
      select_index(view, visible, 0);
      break;
    case key::kEnd:
      select_index(view, visible, static_cast<int>(visible.size()) - 1);
      break;
    case 'T':
    case 'K':
    case 'I': {
      if (!view.signals_off.empty()) {
        view.message = view.signals_off;
        break;
      }
      if (current < 0) {
        view.message = "select a process first (up/down)";
        break;
      }
      const ProcView& p = visible[static_cast<std::size_t>(current)];
      const int sig = k == 'T' ? SIGTERM : (k == 'K' ? SIGKILL : SIGINT);
      view.confirm = PendingSignal{p.pid, p.gpu, sig, p.command, p.name, p.start_ticks};
      return {KeyAction::Ask, {}};
    }
    default:
      return {};
  }
  return {KeyAction::Redraw, {}};
}

void follow_through(ViewState& view, const KeyAction& action, ProcessSignaller* signaller) {
  const std::string off = view.signals_off.empty() ? kReplayNoSignals : view.signals_off;
  if (action.kind == KeyAction::Ask && view.confirm) {
    if (signaller == nullptr) {
      view.confirm.reset();
      view.message = off;
    } else if (std::string why = signaller->vet(*view.confirm); !why.empty()) {
      view.confirm.reset();
      view.message = std::move(why);
    }
  }
  if (action.kind == KeyAction::Signal) {
    view.message = signaller == nullptr ? off : signaller->send(action.signal);
  }
}

}  // namespace gpulens::tui

// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the user chose in `gpulens top` (sort, filter, selection, help, a pending
// signal) and how each key changes it. Pure: keys are plain ints, no ncurses.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tui/top_model.hpp"

namespace gpulens::tui {

// Special keys, mapped from the terminal library's codes by the drawing layer.
namespace key {
inline constexpr int kUp = 0x10001;
inline constexpr int kDown = 0x10002;
inline constexpr int kPageUp = 0x10003;
inline constexpr int kPageDown = 0x10004;
inline constexpr int kHome = 0x10005;
inline constexpr int kEnd = 0x10006;
inline constexpr int kBackspace = 0x10007;
inline constexpr int kResize = 0x10008;
inline constexpr int kClick = 0x10009;  // a mouse click; the drawing layer knows where
inline constexpr int kEscape = 27;
inline constexpr int kEnter = '\n';
}  // namespace key

enum class SortKey { Pid, User, Gpu, Mem, Sm, Cpu, Rss, Container, Command, Count };
const char* sort_key_name(SortKey k);  // "GPU-MEM", as in the table's header

enum class Density { Auto, Full, Compact };

// A signal waiting for y/n: the process as it was listed, and (once vetted) as it
// is on this machine now.
struct PendingSignal {
  std::uint32_t pid = 0;
  int gpu = 0;
  int signal = 0;
  std::string command;                       // shown in the question: the local name once vetted
  std::string listed_name;                   // the short name (comm) the table listed
  std::optional<std::uint64_t> start_ticks;  // the listed process's start time (live only)
};

struct ViewState {
  SortKey sort = SortKey::Mem;
  bool descending = true;
  std::string filter;  // applied: rows whose text contains it (case-insensitive)
  bool editing_filter = false;
  std::string filter_draft;  // while editing
  bool help = false;
  Density density = Density::Auto;
  std::optional<std::uint32_t> selected_pid;
  std::optional<PendingSignal> confirm;  // waiting for y/n
  std::string message;                   // one-shot note in the footer
  std::string signals_off;               // why T/K/I send nothing (a replay); empty when they may
  int page_rows = 10;                    // process rows on screen, for PgUp/PgDn
};

struct KeyAction {
  // Ask: a y/n question was opened (ViewState::confirm), to be vetted before it shows.
  enum Kind { None, Redraw, Quit, Ask, Signal } kind = None;
  PendingSignal signal;  // with Signal: the confirmed one
};

// What T/K/I say on a replay, where nothing can be signalled.
inline constexpr const char* kReplayNoSignals =
    "replay: the processes are a recording's, not this machine's";

// Who signals processes for `gpulens top`. Only a live source gets one (cli builds
// it); a replay has none, so a recorded PID that happens to match a local process is
// never signalled.
class ProcessSignaller {
 public:
  virtual ~ProcessSignaller() = default;
  // Before the question: is the PID still the process listed, and may this user
  // signal it? Sets s.command to the local process's name; returns the refusal in
  // words, empty when the question may be asked.
  virtual std::string vet(PendingSignal& s) = 0;
  // After y: checks again and sends; returns what happened in words.
  virtual std::string send(const PendingSignal& s) = 0;
};

// Filtered by ViewState::filter and sorted by its column; ties by GPU then PID.
std::vector<ProcView> visible_processes(const std::vector<ProcView>& all, const ViewState& view);

// Applies one key. `visible` is what the table shows now (visible_processes).
KeyAction handle_key(ViewState& view, int key, const std::vector<ProcView>& visible);

// Follows a key's action through: a new question is vetted by `signaller` (or
// dropped), a confirmed signal is sent by it. Without a signaller (a replay) nothing
// is ever sent and the footer says why.
void follow_through(ViewState& view, const KeyAction& action, ProcessSignaller* signaller);

}  // namespace gpulens::tui

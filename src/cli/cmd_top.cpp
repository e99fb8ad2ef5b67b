// SPDX-License-Identifier: Apache-2.0
// `gpulens top`: the full-screen live view. Utilization beside SM activity for each
// GPU, the diagnosed state in words with its fix, alerts, and the processes.
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "cli/command.hpp"
#include "cli/live_diagnosis.hpp"
#include "cli/process_signal.hpp"
#include "cli/signals.hpp"
#include "cli/terminal_output.hpp"
#include "core/duration.hpp"
#include "core/text_units.hpp"
#include "sources/replay/replay_source.hpp"
#include "tui/curses_screen.hpp"
#include "tui/layout.hpp"
#include "tui/top_model.hpp"
#include "tui/view_state.hpp"

namespace gpulens::cli {
namespace {

using namespace gpulens::tui;

// The first of the schedulers' fallback notes (Slurm's prolog, then the kubelet).
std::string allocation_note(const std::optional<sources::SamplerStats>& stats) {
  if (!stats) return {};
  for (const auto* scan : {stats->allocations.get(), stats->kube_allocations.get()}) {
    if (scan == nullptr) continue;
    if (auto note = sources::allocation_fallback_note(*scan); !note.empty()) return note;
  }
  return {};
}

struct TopArgs {
  sampler::SourceOptions source;
  bool once = false;
  long count = 0;
  bool no_diagnosis = false;
  bool ascii = false;
  bool no_color = false;
  bool mouse = false;
  std::size_t history = 600;
  int width = 0;   // --once: columns (0 = the terminal's, else 120)
  std::string at;  // --once --replay: the moment of the recording to show
};

// The first and last tick of a recording, read ahead for --once.
struct RecordingSpan {
  double first = 0;
  double last = 0;
};

Result<RecordingSpan> recording_span(const sampler::SourceOptions& so) {
  auto source = open_source_or_explain(so);
  if (!source) return Error{""};  // already explained
  std::optional<RecordingSpan> span;
  for (;;) {
    auto tick = source->next();
    if (!tick) return Error{tick.error().message};
    if (!tick->has_value()) break;
    if ((*tick)->samples.empty()) continue;  // marks alone: not a moment top can show
    if (!span) span = RecordingSpan{(*tick)->t, (*tick)->t};
    span->last = (*tick)->t;
  }
  if (!span) return Error{so.replay + ": the recording has no samples"};
  return *span;
}

// --at: an offset into the recording ("90s", "1m30s", the duration grammar; a bare
// number is seconds) or a point in time (RFC 3339, or "now-30s" where now is the
// recording's end), as docs/durations.md writes them down.
Result<double> resolve_at(const std::string& text, const RecordingSpan& span) {
  double t = 0;
  if (auto offset = parse_duration(text)) {
    t = span.first + *offset;
  } else if (auto when = parse_time(text, span.last)) {
    t = *when;
  } else {
    return Error{"--at '" + text +
                 "': give an offset into the recording (90s, 1m30s) or a time "
                 "(2026-11-21T19:30:12Z; now-30s is 30 s before its end)"};
  }
  constexpr double kSlack = 1e-6;  // offsets typed to the tick land on it
  const std::string bounds = "the recording runs from " + format_utc_time(span.first) + " to " +
                             format_utc_time(span.last) + " (" +
                             duration_compact(span.last - span.first) + ")";
  if (t < span.first - kSlack) return Error{"--at " + text + " is before its start: " + bounds};
  if (t > span.last + kSlack) {
    return Error{"--at " + text + " is past its end: " + bounds +
                 "; for a clock time give RFC 3339, e.g. " + format_utc_time(span.first)};
  }
  return std::min(t + kSlack, span.last);
}

int once_width(int requested) {
  if (requested > 0) return requested;
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return ws.ws_col;
  }
  return 120;
}

// One snapshot to stdout, like `nvitop -1`: a replay is read to its end (or
// --count ticks), live GPUs for --count ticks (2 by default, so that the GPM
// counters, which need two samples, have a value).
int run_once(const TopArgs& args) {
  sampler::SourceOptions so = args.source;
  if (!so.replay.empty()) so.speed = 0;
  std::optional<RecordingSpan> span;
  std::optional<double> at;
  if (!so.replay.empty()) {
    auto read = recording_span(so);
    if (!read) {
      if (!read.error().message.empty()) {
        eprint("gpulens top: {}\n", read.error().message);
      }
      return exit_for_unopened_source(so);
    }
    span = *read;
    if (!args.at.empty()) {
      auto t = resolve_at(args.at, *span);
      if (!t) {
        eprint("gpulens top: {}\n", t.error().message);
        return kExitUsage;
      }
      at = *t;
    }
  }
  auto source = open_source_or_explain(so);
  if (!source) return kExitUsage;
  LiveDiagnosis diagnosis(source->header(), !args.no_diagnosis);
  ModelBuilder builder(source->header(), args.history);
  const long count = args.count > 0 ? args.count : (source->live() ? 2 : 0);
  while (count == 0 || static_cast<long>(builder.ticks()) < count) {
    auto tick = source->next();
    if (!tick) {
      eprint("gpulens top: {}\n", tick.error().message);
      return kExitFailure;
    }
    if (!tick->has_value()) break;
    if (at && (*tick)->t > *at) break;
    diagnosis.on_tick(**tick);
    builder.on_tick(**tick, diagnosis.engine());
  }
  const TopModel& model = builder.model();
  ViewState view;
  view.density = Density::Full;
  FeedStatus feed;
  feed.live = source->live();
  feed.ended = !feed.live;
  if (span) {
    feed.first_t = span->first;
    feed.last_t = span->last;
  }
  // Tall enough for every GPU with its history and every process; the footer
  // (keys) and the padding are dropped.
  std::size_t mig_rows = 0;
  for (const auto& g : model.gpus) mig_rows += g.mig.size();
  const int height =
      static_cast<int>(3 + model.gpus.size() * 12 + mig_rows + model.procs.size() + 3);
  const Screen screen =
      layout_top(model, view, feed, once_width(args.width), height, TerminalCaps{!args.ascii});
  std::vector<Line> lines(screen.lines.begin(), screen.lines.end() - 1);
  while (!lines.empty() && lines.back().text().find_first_not_of(' ') == std::string::npos) {
    lines.pop_back();
  }
  std::fputs(screen_text(Screen{screen.width, screen.height, lines, {}}).c_str(), stdout);
  return kExitOk;
}

// Reads ticks on its own thread, so that a slow or blocked source never delays a
// key; the screen thread wakes on a byte in `wake` and copies the newest model.
class Feed {
 public:
  Feed(sources::TickSource& source, const TopArgs& args)
      : source_(source),
        diagnosis_(source.header(), !args.no_diagnosis),
        builder_(source.header(), args.history),
        count_(args.count) {
    if (pipe(wake_) != 0) wake_[0] = wake_[1] = -1;
    if (source.live()) {
      // Each listed process's start time, read as the tick lists it: what a signal
      // is later checked against.
      builder_.set_start_time_reader(
          [root = args.source.procfs](std::uint32_t pid) -> std::optional<std::uint64_t> {
            auto id = read_process_identity(root, pid);
            if (!id) return std::nullopt;
            return id->start_ticks;
          });
    }
    status_.live = source.live();
    status_.speed = args.source.speed;
  }
  ~Feed() {
    stop();
    if (thread_.joinable()) thread_.join();
    for (int fd : wake_) {
      if (fd >= 0) close(fd);
    }
  }
  void start() {
    thread_ = std::thread([this] { loop(); });
  }
  void stop() {
    stopping_ = true;
    source_.stop();
    notify();
  }
  int wake_fd() const { return wake_[0]; }
  void drain() {
    char buf[64];
    while (read(wake_[0], buf, sizeof buf) == sizeof buf) {
    }
    notified_ = false;
  }
  // Copies the model when it changed since the last call.
  bool snapshot(TopModel& model, FeedStatus& status) {
    std::lock_guard lock(mutex_);
    status = status_;
    if (version_ == seen_) return false;
    seen_ = version_;
    model = builder_.model();
    return true;
  }
  bool stopping() const { return stopping_; }

 private:
  void notify() {
    if (wake_[1] >= 0 && !notified_.exchange(true)) {
      const char b = 1;
      [[maybe_unused]] const auto n = write(wake_[1], &b, 1);
    }
  }
  void loop() {
    while (!stopping_) {
      auto tick = source_.next();
      std::lock_guard lock(mutex_);
      if (!tick) {
        status_.error = tick.error().message;
        break;
      }
      if (!tick->has_value()) break;
      diagnosis_.on_tick(**tick);
      builder_.on_tick(**tick, diagnosis_.engine());
      status_.note = allocation_note(source_.stats());
      ++version_;
      if (count_ > 0 && static_cast<long>(builder_.ticks()) >= count_) break;
      notify();
    }
    {
      std::lock_guard lock(mutex_);
      status_.ended = true;
      ++version_;
    }
    notify();
  }

  sources::TickSource& source_;
  LiveDiagnosis diagnosis_;
  ModelBuilder builder_;
  long count_;
  std::mutex mutex_;
  FeedStatus status_;
  std::uint64_t version_ = 0;
  std::uint64_t seen_ = ~std::uint64_t{0};
  int wake_[2] = {-1, -1};
  std::atomic<bool> notified_{false};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

int run_top(const TopArgs& args) {
  if (!args.at.empty() && (args.source.replay.empty() || !args.once)) {
    eprint(
        "gpulens top: --at picks a moment of a recording: use it with --once "
        "--replay FILE\n");
    return kExitUsage;
  }
  if (!args.at.empty() && args.count > 0) {
    eprint("gpulens top: --at and --count both choose the moment shown; give one\n");
    return kExitUsage;
  }
  if (args.once) return run_once(args);
  if (isatty(STDIN_FILENO) == 0 || isatty(STDOUT_FILENO) == 0) {
    eprint(
        "gpulens top: needs a terminal; for one snapshot on a pipe use "
        "'gpulens top --once', for lines 'gpulens stream'\n");
    return kExitUsage;
  }
  // SIGWINCH stays blocked in every thread (the sampler's start below) and is let
  // in only while the screen thread waits in ppoll, so a resize always wakes it
  // instead of landing in another thread or just before the wait.
  sigset_t winch;
  sigemptyset(&winch);
  sigaddset(&winch, SIGWINCH);
  sigset_t wait_mask;
  pthread_sigmask(SIG_BLOCK, &winch, &wait_mask);
  sigdelset(&wait_mask, SIGWINCH);
  auto source = open_source_or_explain(args.source);
  if (!source) return kExitUsage;
  Feed feed(*source, args);
  // Only a live source can signal: a replay's PIDs are a recording's.
  const auto signaller = make_process_signaller(*source, args.source.procfs);
  std::atomic<bool> quit{false};
  on_stop_signal([&feed, &quit] {
    quit = true;
    feed.stop();
  });
  CursesOptions co;
  co.color = !args.no_color && !no_color_requested();
  co.ascii = args.ascii;
  co.mouse = args.mouse;
  auto screen = CursesScreen::open(co);
  if (!screen) {
    on_stop_signal([] {});
    eprint("gpulens top: {}\n", screen.error().message);
    return kExitUsage;
  }
  feed.start();
  TopModel model;
  FeedStatus status;
  ViewState view;
  if (!signaller) view.signals_off = kReplayNoSignals;
  Screen shown;  // the last screen drawn, for mouse clicks
  bool dirty = true;
  while (!quit) {
    if (feed.snapshot(model, status)) dirty = true;
    if (dirty) {
      shown = layout_top(model, view, status, (*screen)->width(), (*screen)->height(),
                         (*screen)->caps());
      (*screen)->draw(shown);
      dirty = false;
    }
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {feed.wake_fd(), POLLIN, 0}};
    // No timeout: the feed's byte, a key or SIGWINCH (let in only here) wakes us.
    const int n = ppoll(fds, 2, nullptr, &wait_mask);
    if (n < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) feed.drain();
    // Keys (and KEY_RESIZE after SIGWINCH) are read without blocking.
    for (int k = (*screen)->poll_key(); k >= 0; k = (*screen)->poll_key()) {
      const auto visible = visible_processes(model.procs, view);
      view.page_rows = std::max(1, (*screen)->height() / 2);
      const KeyAction action = k == key::kClick ? click(view, shown, (*screen)->last_click().first,
                                                        (*screen)->last_click().second)
                                                : handle_key(view, k, visible);
      // A question is asked only about the process listed, when this user may
      // signal it; y sends only to that same process (cli/process_signal).
      follow_through(view, action, signaller.get());
      if (action.kind == KeyAction::Quit) quit = true;
      if (action.kind != KeyAction::None) dirty = true;
    }
    if (fds[0].revents & (POLLHUP | POLLERR)) break;
  }
  feed.stop();
  on_stop_signal([] {});  // the action above refers to this frame's objects
  return kExitOk;
}

}  // namespace

void register_top(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<TopArgs>();
  auto* cmd = app.add_subcommand(
      "top",
      "Full-screen live view (like nvitop): per GPU, utilization beside SM activity, tensor,\n"
      "DRAM, PCIe, NVLink, memory, power, temperature, clocks; what holds it back in words\n"
      "with the first fix; firing alerts; and the processes across GPUs (sort, filter,\n"
      "signal: live only, and only the process listed). Plain 'gpulens' on a terminal starts\n"
      "it. Press ? inside for the keys.");
  add_source_options(*cmd, args->source, /*offline=*/false);
  cmd->add_flag("-1,--once", args->once,
                "Print one snapshot and exit (a replay is read to its end, --count or --at)");
  cmd->add_option("--at", args->at,
                  "--once --replay: show the recording at this moment: an offset from its\n"
                  "start (90s, 1m30s) or a time (2026-11-21T19:30:12Z; now-30s = 30 s before\n"
                  "its end). Default: its end");
  cmd->add_option("-c,--count", args->count,
                  "Stop reading after this many ticks; the screen stays until q")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--history", args->history, "Ticks of history kept for the sparklines")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--width", args->width,
                  "--once: columns to lay out for (default: terminal, "
                  "else 120)")
      ->check(CLI::Range(40, 1000));
  cmd->add_flag("--ascii", args->ascii, "ASCII bars and sparklines instead of block glyphs");
  cmd->add_flag("--no-color", args->no_color, "No colours (as does NO_COLOR=1)");
  cmd->add_flag("--mouse", args->mouse,
                "Clicks select a process or sort by a heading; the wheel moves the selection");
  cmd->add_flag("--no-diagnosis", args->no_diagnosis, "Do not run the diagnosis engine");
  cmd->callback([args, &run] { run = [args] { return run_top(*args); }; });
}

}  // namespace gpulens::cli

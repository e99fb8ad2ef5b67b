// SPDX-License-Identifier: Apache-2.0
#include "inject/trace_control.hpp"

#include <time.h>

#include <cerrno>
#include <thread>

#include "inject/injection.hpp"
#include "kernels/record/chunk_record.hpp"

namespace gpulens::inject {
namespace {

void sleep_until_unix(std::int64_t unix_ns) {
  timespec at{};
  at.tv_sec = static_cast<time_t>(unix_ns / 1000000000);
  at.tv_nsec = static_cast<long>(unix_ns % 1000000000);
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
}

// Attaches CUPTI with our buffers and every wanted kind on. The first attach
// fixes the record's clock. Called with `toggle` held.
bool attach(Injection& in) {
  if (!in.records.started()) {
    const std::uint64_t base = in.cupti.now();
    in.records.start(base, unix_now_ns());
    in.windows.chunk_start_ns = base;
  }
  return in.cupti.attach(buffer_requested, buffer_completed);
}

// Opens a window. Called with `toggle` held.
bool open_window(Injection& in) {
  const bool ok = in.cupti.attached() ? in.cupti.enable_per_launch_kinds() : attach(in);
  if (!ok) return false;
  in.windows.window_start_ns = in.cupti.now();
  in.windows.tracing = true;
  return true;
}

// Closes the open window: its end is taken before the kinds go off, so every
// launch recorded was launched inside it. Called with `toggle` held.
void close_window(Injection& in) {
  Windows& w = in.windows;
  if (!w.tracing) return;
  const std::uint64_t now = in.cupti.now();
  in.cupti.disable_per_launch_kinds();
  w.windows.emplace_back(w.window_start_ns, now);
  w.tracing = false;
}

// The threads get the object they run for (the process's, injection.hpp; a
// test's own in tests/unit/inject), which outlives them.
void window_loop(Injection* process) {
  Injection& in = *process;
  Windows& ws = in.windows;
  for (;;) {
    const Window w = window_at_or_after(*ws.schedule, unix_now_ns());
    sleep_until_unix(w.start_ns);
    {
      std::lock_guard lock(ws.toggle);
      if (ws.stopping) return;
      // Open already when cuInit opened the first window (open_window_if_due).
      if (!ws.tracing && !open_window(in)) {
        ws.stopping = true;
        ws.active = false;
        return;
      }
    }
    sleep_until_unix(w.end_ns);
    std::lock_guard lock(ws.toggle);
    if (ws.stopping) return;  // whoever stopped closed the window
    close_window(in);
    // The window's records, as far as CUPTI has them, go out now as one chunk:
    // the record stays bounded and a job that dies keeps its closed windows.
    in.cupti.flush(false);
    write_chunk(in, ws.windows.back().first, ws.windows.back().second, true);
    ws.windows_written = ws.windows.size();
  }
}

// Traced whole: a chunk every kChunkSeconds, for the same reasons.
void chunk_loop(Injection* process) {
  Injection& in = *process;
  Windows& ws = in.windows;
  const auto period = static_cast<std::int64_t>(kernels::kChunkSeconds * 1e9);
  for (std::int64_t next = unix_now_ns() + period;; next += period) {
    sleep_until_unix(next);
    std::lock_guard lock(ws.toggle);
    if (ws.stopping) return;
    in.cupti.flush(false);
    const std::uint64_t now = in.cupti.now();
    write_chunk(in, ws.chunk_start_ns, now, false);
    ws.chunk_start_ns = now;
  }
}

}  // namespace

bool trace_whole_job(Injection& in) {
  std::lock_guard lock(in.windows.toggle);
  if (attach(in)) {
    std::thread(chunk_loop, &in).detach();
    return true;
  }
  in.windows.stopping = true;
  return false;
}

void open_window_if_due(Injection& in) {
  const std::int64_t now = unix_now_ns();
  const Window w = window_at_or_after(*in.windows.schedule, now);
  if (now < w.start_ns) return;
  std::lock_guard lock(in.windows.toggle);
  if (!in.windows.stopping && !open_window(in)) {
    in.windows.stopping = true;
    in.windows.active = false;
  }
}

void start_window_thread(Injection& in) {
  std::thread(window_loop, &in).detach();
}

void stop_tracing(Injection& in) {
  std::lock_guard lock(in.windows.toggle);
  in.windows.stopping = true;
  close_window(in);
  in.cupti.stop();
  in.windows.active = false;
}

void write_last_chunk(Injection& in) {
  if (!in.cupti.attached()) return;
  Windows& w = in.windows;
  std::lock_guard lock(w.toggle);  // stopping: no window thread writes any more
  const std::uint64_t now = in.cupti.now();
  if (w.windows.size() > w.windows_written) {
    write_chunk(in, w.windows.back().first, w.windows.back().second, true);
    w.windows_written = w.windows.size();
  } else {
    write_chunk(in, w.chunk_start_ns, now, false);
  }
}

}  // namespace gpulens::inject

// SPDX-License-Identifier: Apache-2.0
#include "inject/trace_control.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "inject/detach.hpp"
#include "kernels/chunk_record.hpp"

namespace gpulens::inject {
namespace {

void sleep_until_unix(std::int64_t unix_ns) {
  timespec at{};
  at.tv_sec = static_cast<time_t>(unix_ns / 1000000000);
  at.tv_nsec = static_cast<long>(unix_ns % 1000000000);
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
}

void add_reason(State& s, const std::string& what) {
  if (s.reason.find(what) == std::string::npos) s.reason += (s.reason.empty() ? "" : "; ") + what;
}

// Switches the per-launch kinds on. False when CUPTI refuses one the view cannot
// do without: the status then says why and nothing stays on.
bool enable_per_launch_kinds(State& s) {
  for (CUpti_ActivityKind k : kKinds) {
    if (!per_launch_kind(k) || !kind_wanted(k)) continue;
    const CUptiResult r = s.api.enable(k);
    if (r == CUPTI_SUCCESS) continue;
    const std::string what = "cuptiActivityEnable(" + std::to_string(static_cast<int>(k)) +
                             "): " + result_text(s.api, r);
    if (k == CUPTI_ACTIVITY_KIND_MARKER) {
      // Without it there are no NVTX ranges; the kernel view stays whole.
      std::lock_guard lock(s.mutex);
      if (s.nvtx_error.empty()) s.nvtx_error = what;
      continue;
    }
    if (optional_kind(k)) {
      add_reason(s, what);  // the view loses synchronisations, not its kernels
      continue;
    }
    // A profiler (Nsight) holding the device, or a CUPTI too old: step aside.
    s.status = "cupti_error";
    s.reason = what;
    for (CUpti_ActivityKind d : kKinds) s.api.disable(d);
    return false;
  }
  return true;
}

// Attaches CUPTI with our buffers and every wanted kind on. The first attach
// fixes the record's clock. Called with `toggle` held.
bool attach(State& s) {
  if (s.collector == nullptr) {
    s.api.version(&s.cupti_version);
    s.api.timestamp(&s.base_ns);
    s.base_unix_ns = unix_now_ns();
    s.chunk_start_ns = s.base_ns;
    std::lock_guard lock(s.mutex);
    s.collector = std::make_unique<Collector>(s.base_ns);
  }
  if (const CUptiResult r = s.api.register_callbacks(buffer_requested, buffer_completed);
      r != CUPTI_SUCCESS) {
    s.status = "cupti_error";
    s.reason = "cuptiActivityRegisterCallbacks: " + result_text(s.api, r);
    return false;
  }
  s.attached = true;
  if (kind_wanted(CUPTI_ACTIVITY_KIND_DEVICE)) {
    if (const CUptiResult r = s.api.enable(CUPTI_ACTIVITY_KIND_DEVICE); r != CUPTI_SUCCESS) {
      // Without device properties the view takes SM limits from its own table.
      add_reason(s, "cuptiActivityEnable(DEVICE): " + result_text(s.api, r));
    }
  }
  return enable_per_launch_kinds(s);
}

// How long after a window closes a detach waits: work launched inside the window
// may still be running on the GPU, and its records must be complete when the
// forced flush takes them (a finalise would lose them).
constexpr double kDrainS = 0.5;

// Opens a window. Called with `toggle` held.
bool open_window(State& s) {
  settle_detach(s);
  const bool ok = s.attached ? enable_per_launch_kinds(s) : attach(s);
  if (!ok) return false;
  s.api.timestamp(&s.window_start_ns);
  s.tracing = true;
  return true;
}

// Closes the open window: its end is taken before the kinds go off, so every
// launch recorded was launched inside it. Called with `toggle` held.
void close_window(State& s) {
  if (!s.tracing) return;
  std::uint64_t now = 0;
  s.api.timestamp(&now);
  for (CUpti_ActivityKind k : kKinds) {
    if (per_launch_kind(k)) s.api.disable(k);
  }
  s.windows.emplace_back(s.window_start_ns, now);
  s.tracing = false;
}

void window_loop() {
  State& s = state();
  const double gap_s = s.schedule->every_s - s.schedule->window_s;
  const auto drain = std::chrono::duration<double>(std::min(kDrainS, gap_s / 2));
  for (;;) {
    const Window w = window_at_or_after(*s.schedule, unix_now_ns());
    sleep_until_unix(w.start_ns);
    {
      std::lock_guard lock(s.toggle);
      if (s.stopping) return;
      // Open already when cuInit opened the first window (open_window_if_due).
      if (!s.tracing && !open_window(s)) {
        s.stopping = true;
        s.active = false;
        return;
      }
    }
    sleep_until_unix(w.end_ns);
    {
      std::lock_guard lock(s.toggle);
      if (s.stopping) return;  // whoever stopped closed the window
      close_window(s);
      // The window's records, as far as CUPTI has them, go out now as one chunk:
      // the record stays bounded and a job that dies keeps its closed windows.
      s.api.flush_all(0);
      write_chunk(s, s.windows.back().first, s.windows.back().second, true);
      s.windows_written = s.windows.size();
    }
    if (!s.detach_on) continue;
    std::this_thread::sleep_for(drain);
    std::lock_guard lock(s.toggle);
    if (s.stopping) return;
    // Every record of the window is in our buffers before CUPTI may go; they leave
    // with the next chunk or the end line.
    s.api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    request_detach(s);
  }
}

// Traced whole: a chunk every kChunkSeconds, for the same reasons.
void chunk_loop() {
  State& s = state();
  const auto period = static_cast<std::int64_t>(kernels::kChunkSeconds * 1e9);
  for (std::int64_t next = unix_now_ns() + period;; next += period) {
    sleep_until_unix(next);
    std::lock_guard lock(s.toggle);
    if (s.stopping) return;
    s.api.flush_all(0);
    std::uint64_t now = 0;
    s.api.timestamp(&now);
    write_chunk(s, s.chunk_start_ns, now, false);
    s.chunk_start_ns = now;
  }
}

}  // namespace

bool trace_whole_job(State& s) {
  std::lock_guard lock(s.toggle);
  if (attach(s)) {
    std::thread(chunk_loop).detach();
    return true;
  }
  s.stopping = true;
  return false;
}

void open_window_if_due(State& s) {
  const std::int64_t now = unix_now_ns();
  const Window w = window_at_or_after(*s.schedule, now);
  if (now < w.start_ns) return;
  std::lock_guard lock(s.toggle);
  if (!s.stopping && !open_window(s)) {
    s.stopping = true;
    s.active = false;
  }
}

void start_window_thread() {
  std::thread(window_loop).detach();
}

void stop_tracing(State& s) {
  std::lock_guard lock(s.toggle);
  s.stopping = true;
  close_window(s);
  settle_detach(s);
  if (s.attached) {
    s.api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // our buffer callback takes `mutex`
    for (CUpti_ActivityKind k : kKinds) s.api.disable(k);
  }
  s.active = false;
}

}  // namespace gpulens::inject

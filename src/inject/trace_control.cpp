#include "inject/trace_control.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

namespace gpulens::inject {
namespace {

// How long after a window closes the library waits before detaching: work
// launched inside the window is still running on the GPU for as long as the
// job's queue is deep, and its records must be complete when they are flushed.
constexpr double kDrainS = 0.5;

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

// Called by CUPTI at every driver and runtime API call while a detach is asked
// for: the first one on its way out finalises CUPTI, as NVIDIA's docs ask
// (cuptiFinalize). Takes no lock: it runs on the job's threads.
void CUPTIAPI on_api_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  State& s = state();
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info == nullptr || info->callbackSite != CUPTI_API_EXIT) return;
  if (!s.detach_pending.load() || !s.detach_pending.exchange(false)) return;
  s.api.finalize();
  ++s.detaches;
  s.attached = false;
}

// After a window: every record flushed, then CUPTI detached at the job's next
// CUDA call. Called with `toggle` held.
void request_detach(State& s) {
  if (!s.attached) return;
  s.api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // our buffer callback takes `mutex`
  if (s.keep_attached) return;
  if (const CUptiResult r = s.api.subscribe(
          &s.subscriber, reinterpret_cast<CUpti_CallbackFunc>(&on_api_call), nullptr);
      r != CUPTI_SUCCESS) {
    // Another subscriber (the job's own tool): CUPTI stays attached, off.
    s.keep_attached = true;
    s.detach_note = "cuptiSubscribe: " + result_text(s.api, r) + "; CUPTI stayed attached";
    return;
  }
  s.api.enable_domain(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  s.api.enable_domain(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  // Only now may a callback finalise: finalising frees the subscriber, which must
  // not be touched after (the first version armed this before enabling the
  // domains, and a job thread could finalise between the two calls).
  s.detach_requested = true;
  s.detach_pending = true;
  // An API exit of our own, so that CUPTI is finalised here, on this thread, at
  // once, rather than on one of the job's threads whenever it next calls CUDA.
  if (s.driver_get_version != nullptr) {
    int version = 0;
    s.driver_get_version(&version);
  }
}

// Before CUPTI is touched again: a detach asked for is either taken back (no
// CUDA call came since: CUPTI is still attached) or waited for. False when a
// detach under way did not finish in time: this window is then skipped.
bool settle_detach(State& s) {
  if (!s.detach_requested) return true;
  s.detach_requested = false;
  if (s.detach_pending.exchange(false)) {
    s.api.unsubscribe(s.subscriber);
    return true;
  }
  for (int i = 0; i < 2000 && s.attached.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return !s.attached.load();
}

// Opens a window. Called with `toggle` held.
bool open_window(State& s) {
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
      if (settle_detach(s) && !open_window(s)) {
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
    }
    std::this_thread::sleep_for(drain);
    {
      std::lock_guard lock(s.toggle);
      if (s.stopping) return;
      request_detach(s);
    }
  }
}

}  // namespace

bool trace_whole_job(State& s) {
  std::lock_guard lock(s.toggle);
  if (attach(s)) return true;
  s.stopping = true;
  return false;
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

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The injection library's one process-wide state (libgpulens_kernels.so), shared
// by its parts: kernels_inject.cpp (entry points, records, the record file) and
// trace_control.cpp (when CUPTI records: attaching, windows).
#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "inject/agent_link.hpp"
#include "inject/collector.hpp"
#include "inject/cupti_loader.hpp"
#include "inject/detach_gate.hpp"
#include "inject/schedule.hpp"

namespace gpulens::inject {

// libcupti's entry points, resolved from the copy the job uses.
struct Api {
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&::cuptiActivityEnable) enable = nullptr;
  decltype(&::cuptiActivityDisable) disable = nullptr;
  decltype(&::cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&::cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) dropped = nullptr;
  decltype(&::cuptiGetTimestamp) timestamp = nullptr;
  decltype(&::cuptiGetResultString) result_string = nullptr;
  decltype(&::cuptiGetVersion) version = nullptr;
  // Detaching between windows only (detach.hpp); null where libcupti lacks them.
  decltype(&::cuptiSubscribe) subscribe = nullptr;
  decltype(&::cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&::cuptiEnableDomain) enable_domain = nullptr;
  decltype(&::cuptiFinalize) finalize = nullptr;
};

inline constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_MARKER};

// The kinds that CUPTI records per launch or per call (NVTX markers included);
// device properties come once per device.
inline bool per_launch_kind(CUpti_ActivityKind k) {
  return k != CUPTI_ACTIVITY_KIND_DEVICE;
}

// The kinds without which the kernel view loses a column or a table, not itself.
inline bool optional_kind(CUpti_ActivityKind k) {
  return k == CUPTI_ACTIVITY_KIND_DEVICE || k == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ||
         k == CUPTI_ACTIVITY_KIND_MARKER;
}

// $GPULENS_KERNELS_KINDS (docs/kernels.md): only these kinds are recorded.
bool kind_wanted(CUpti_ActivityKind k);

struct State {
  std::mutex mutex;  // the collected records (CUPTI's buffer thread takes it)
  Api api;
  CuptiLibrary library;
  std::unique_ptr<Collector> collector;  // made at CUPTI's first attach
  std::string out_dir;
  std::string status = "ok";  // ok | no_cupti | cupti_error | job_profiler
  std::string reason;
  std::uint64_t base_ns = 0;            // CUPTI's clock at the first attach ...
  std::int64_t base_unix_ns = 0;        // ... and CLOCK_REALTIME at the same moment
  std::uint64_t first_ns = UINT64_MAX;  // first and last GPU activity seen
  std::uint64_t last_ns = 0;
  std::int64_t yielded_ns = -1;  // relative, when the job's profiler took over
  bool active = false;           // collecting: not stopped, not failed
  bool started = false;
  bool written = false;
  bool job_registered_first = false;  // the job had registered buffers before cuInit
  bool forked_child = false;
  std::uint32_t cupti_version = 0;
  std::unordered_map<std::string, std::string> names;  // mangled -> demangled
  // CUPTI shares one name string among all records of a kernel, so its address
  // finds the demangled name without hashing a mangled name of hundreds of bytes
  // per record (this runs for every kernel the job launches).
  std::unordered_map<const char*, const std::string*> names_by_address;
  // NVTX: how often NVTX's loader called us and libcupti accepted, and why not.
  int nvtx_forwarded = 0;
  bool nvtx_called = false;
  std::string nvtx_error;  // CUPTI refused NVTX or its marker records

  // When CUPTI records (trace_control.cpp). nullopt schedule: the whole job.
  std::optional<TraceSchedule> schedule;
  std::string schedule_error;  // GPULENS_KERNELS_SCHEDULE unreadable: whole job traced
  // `toggle` orders the window thread's switching against the exit handler and
  // the job's profiler taking over. It is never held by CUPTI's callbacks.
  std::mutex toggle;
  bool stopping = false;  // no more windows: exit, or the job's profiler took over
  bool tracing = false;   // a window is open
  std::uint64_t window_start_ns = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;  // CUPTI timestamps
  // CUPTI initialised with our buffers registered; a detach (a job thread's
  // cuptiFinalize, detach.cpp) clears it.
  std::atomic<bool> attached{false};

  // Detaching between windows (detach.hpp).
  bool detach_on = false;  // GPULENS_KERNELS_DETACH=1, and libcupti can
  DetachGate detach_gate;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::atomic<std::uint64_t> detaches{0};
  std::atomic<std::uint64_t> detach_max_ns{0};  // the longest cuptiFinalize, on a job thread
  std::string detach_note;  // why CUPTI stayed attached although asked to detach

  // The record file (kernels_inject.cpp): `writing` orders the window or chunk
  // thread's lines against the exit handler's.
  std::mutex writing;
  int record_fd = -1;
  bool process_written = false;
  std::uint64_t chunks = 0;          // chunk lines written (their `seq`)
  std::size_t windows_written = 0;   // windows whose chunk is out
  std::uint64_t chunk_start_ns = 0;  // traced whole: where the next chunk starts

  // Each chunk's summary to the node agent ($GPULENS_KERNELS_AGENT, agent_link.hpp),
  // sent under `writing`; null when not asked for, or asked for wrongly (the note).
  std::unique_ptr<AgentLink> agent;
  std::string agent_note;
};

State& state();
std::string result_text(const Api& api, CUptiResult r);
std::int64_t unix_now_ns();

// Drains what CUPTI delivered since the last chunk and appends it to the record
// as one chunk over [start, end] (CUPTI timestamps); `window`: a trace window.
void write_chunk(State& s, std::uint64_t start, std::uint64_t end, bool window);

// CUPTI's buffer callbacks (kernels_inject.cpp).
void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size,
                               size_t valid);

}  // namespace gpulens::inject

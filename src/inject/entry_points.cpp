// SPDX-License-Identifier: Apache-2.0
// libgpulens_kernels.so: loaded into every CUDA process of a `gpulens run
// --kernels` job, by the driver (CUDA_INJECTION64_PATH, which calls
// InitializeInjection from cuInit) and by the dynamic loader (LD_PRELOAD, so that
// the CUPTI entry points below stand in front of libcupti's own).
//
// It records GPU activity with the CUPTI Activity API only: kernels, copies,
// memsets, synchronisations, device properties, and the job's NVTX ranges as
// CUPTI marker records. It never subscribes to the Callback API, which admits
// one subscriber per process, so a profiler the job starts itself (torch.profiler,
// kineto) still can. When the job registers its own activity buffers, this
// library flushes what it has, steps aside and says so in its record: the job's
// profiler then gets every record, as it would alone. It steps aside at the job's
// first activity attribute already, which a profiler sets before registering.
//
// NVTX reaches a tool only through the library NVTX_INJECTION64_PATH names (NVTX
// ignores preloaded libraries). `gpulens run` names this library there, unless
// the variable was already set; InitializeInjectionNvtx2 below passes NVTX's
// call on to the libcupti this library uses, so there is one CUPTI in the
// process and it sees the ranges. A job that sets the variable itself before its
// first NVTX call keeps its own tool; the record then says so.
//
// Tracing every kernel costs the job CUPTI's few microseconds per launch, so by
// default CUPTI records only in windows (schedule.hpp, GPULENS_KERNELS_SCHEDULE;
// trace_control.cpp); the record lists the windows.
//
// Each process appends its record to $GPULENS_KERNELS_DIR/kernels-<pid>.jsonl as
// it goes (sender.hpp; kernels/record/chunk_record.hpp, version 4): bounded lines as each window
// closes (traced whole: every kChunkSeconds), and an end line at exit. `gpulens
// run` moves the lines into the recording. With $GPULENS_KERNELS_AGENT (set for a
// job anywhere on the node, docs/kernels-agent.md) each chunk's summary also goes
// to the node's gpulens-serve as one datagram that never waits (agent_link.hpp);
// without GPULENS_KERNELS_DIR it is the only output, traced in the node's
// windows (schedule.hpp, node_schedule). Nothing here may change what the job
// does: every failure ends in a record that says why, never in an exit or a
// message on the job's streams.
//
// This file holds the entry points only: the driver's, NVTX's and the one CUPTI
// call of the job that this library stands in front of. What they set going lives
// in the seams of injection.hpp.
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "inject/injection.hpp"

#define GPULENS_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpulens::inject {

namespace {

void at_exit() {
  Injection& in = injection();
  // A forked child has no window thread and no GPU work of its own; its locks may
  // have been held by a thread that does not exist in it.
  if (!in.started || in.forked_child) return;
  stop_tracing(in);  // closes the open window, and everything CUPTI holds comes in
  write_last_chunk(in);
  write_end(in);
}

void in_forked_child() {
  // A fork of a CUDA process (a DataLoader worker) shares our memory but not the
  // GPU work: it must not write the parent's record again under its own pid.
  injection().sender.written = true;
  injection().forked_child = true;
}

// Reads GPULENS_KERNELS_SCHEDULE (or, for the node agent alone, the node's
// windows) into the windows' schedule.
void read_schedule(Injection& in, bool to_file) {
  Windows& w = in.windows;
  if (!to_file && std::getenv("GPULENS_KERNELS_SCHEDULE") == nullptr) {
    w.schedule = node_schedule();  // opted in outside gpulens run: the node's windows
  }
  const char* text = std::getenv("GPULENS_KERNELS_SCHEDULE");
  if (text == nullptr || *text == '\0') return;
  w.schedule = parse_schedule(text);
  if (!w.schedule) {
    w.schedule_error = std::string("GPULENS_KERNELS_SCHEDULE '") + text +
                       "' is not EPOCH_NS:FIRST_S:WINDOW_S:EVERY_S; the whole job was traced";
  } else if (w.schedule->whole_job()) {
    w.schedule.reset();
  } else if (w.schedule->spread()) {
    w.schedule->origin_unix_ns = to_file ? job_origin_ns(in.sender.out_dir, unix_now_ns()) : 0;
  }
}

int initialize() {
  Injection& in = injection();
  const char* dir = std::getenv("GPULENS_KERNELS_DIR");
  const char* agent = std::getenv("GPULENS_KERNELS_AGENT");
  const bool to_file = dir != nullptr && *dir != '\0';
  const bool to_agent = agent != nullptr && *agent != '\0';
  if (!to_file && !to_agent) return 1;  // neither gpulens run nor the agent asked: do nothing
  if (to_file) in.sender.out_dir = dir;
  if (to_agent) {
    std::string why;
    const std::string socket = kernels::agent_socket_from_env("GPULENS_KERNELS_AGENT", agent, why);
    if (!socket.empty()) {
      in.sender.agent = std::make_unique<AgentLink>(socket);
    } else {
      in.sender.agent_note = why;  // said in the record's end line, if there is a record
      if (!to_file) return 1;
    }
  }
  in.started = true;
  read_schedule(in, to_file);
  in.records.set_unix_base(unix_now_ns());
  std::atexit(at_exit);
  pthread_atfork(nullptr, nullptr, in_forked_child);
  if (in.job_registered_first) {
    in.cupti.job_profiler_took_over(
        std::nullopt, "the job registered its own CUPTI activity buffers before CUDA started");
    return 1;
  }
  if (!in.cupti.resolve()) return 1;  // the status says why
  in.windows.active = true;
  if (in.windows.schedule) {
    // CUPTI is first touched when the first window opens: here, inside cuInit, when
    // it is open already (as a whole-job trace attaches), else on the window thread.
    open_window_if_due(in);
    start_window_thread(in);
  } else if (!trace_whole_job(in)) {
    in.windows.active = false;
  }
  return 1;
}

}  // namespace
}  // namespace gpulens::inject

// NVTX's loader calls this at the first NVTX call of each copy of NVTX in the
// process (every library built with the NVTX headers has its own), because
// `gpulens run` names this library in NVTX_INJECTION64_PATH. Each call goes on to
// libcupti's own entry point, which installs CUPTI's NVTX handlers; CUPTI then
// writes the ranges as marker records into our activity buffers. Returning 0
// leaves NVTX's calls as no-ops, as with no tool at all.
using NvtxGetExportTable = const void* (*)(std::uint32_t);
GPULENS_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTable get_export_table) {
  using namespace gpulens::inject;
  CuptiSeam& cupti = injection().cupti;
  const char* dir = std::getenv("GPULENS_KERNELS_DIR");
  if (dir == nullptr || *dir == '\0') return 0;  // loaded outside gpulens run
  const CuptiLibrary& lib = cupti.open();
  if (lib.handle == nullptr) {
    cupti.nvtx_called(false, "");
    return 0;  // the record says no_cupti
  }
  using Init = int (*)(NvtxGetExportTable);
  auto real = reinterpret_cast<Init>(dlsym(lib.handle, "InitializeInjectionNvtx2"));
  const int ok = real != nullptr ? real(get_export_table) : 0;
  cupti.nvtx_called(ok != 0, real == nullptr ? lib.path + " has no InitializeInjectionNvtx2"
                                             : lib.path + ": InitializeInjectionNvtx2 failed");
  return ok;
}

GPULENS_EXPORT int InitializeInjection(void) {
  static std::once_flag once;
  static int result = 1;
  std::call_once(once, [] { result = gpulens::inject::initialize(); });
  return result;
}

namespace gpulens::inject {
namespace {

// The job's profiler takes CUPTI's Activity API: our kinds off, our buffers
// flushed (stop_tracing), and the moment noted for the record. Once only: the
// windows are no longer active afterwards.
void hand_over_to_job(Injection& in) {
  if (!in.started || !in.windows.active) return;
  // When, on the record's clock: CUPTI's where it answers, else CLOCK_REALTIME
  // from the same base. On an H200 (2026-11-29) a nested torch.profiler job's
  // record said the profiler came 1.8e9 s before CUDA started: CUPTI's clock
  // read 0 here.
  const std::uint64_t cupti_now = in.cupti.now();
  const std::int64_t unix_now = unix_now_ns();
  stop_tracing(in);
  std::optional<std::int64_t> yielded;
  if (in.records.started()) {  // else it came before the first window
    const RecordClock c = in.records.clock();
    yielded = cupti_now >= c.base_ns ? static_cast<std::int64_t>(cupti_now - c.base_ns)
                                     : unix_now - c.base_unix_ns;
  }
  in.cupti.job_profiler_took_over(yielded,
                                  "the job started its own CUPTI profiler (e.g. torch.profiler)");
}

}  // namespace
}  // namespace gpulens::inject

// The job (torch.profiler through kineto, or any CUPTI client) registers its own
// activity buffers: CUPTI keeps one pair of callbacks per process, so ours would
// be replaced and the two would take each other's records. Flush ours, step
// aside, note when, and pass the call on to the real libcupti.
GPULENS_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
  using namespace gpulens::inject;
  Injection& in = injection();
  using Fn = decltype(&::cuptiActivityRegisterCallbacks);
  Fn real = in.cupti.api().register_callbacks;
  if (real == nullptr)
    real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "cuptiActivityRegisterCallbacks"));
  if (requested != buffer_requested) {
    if (!in.started) {
      in.job_registered_first = true;
    } else {
      hand_over_to_job(in);
    }
  }
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return real(requested, completed);
}

// A profiler may set its activity attributes before it registers its buffers:
// kineto's source sets CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER first when
// per-thread buffers are asked for. CUPTI wants that attribute set before callbacks are registered
// and before any kind is enabled, and calls a change in mid-session undefined (cupti_activity.h).
// Inside one of our windows our kinds are on, so the job's first attribute, not its registration,
// is where we step aside. This library sets no attribute itself, so every call here is the job's.
GPULENS_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attribute,
                                                     size_t* value_size, void* value) {
  using namespace gpulens::inject;
  Injection& in = injection();
  using Fn = decltype(&::cuptiActivitySetAttribute);
  Fn real = in.cupti.api().set_attribute;
  if (real == nullptr) real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "cuptiActivitySetAttribute"));
  hand_over_to_job(in);
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return real(attribute, value_size, value);
}

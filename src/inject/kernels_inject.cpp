// SPDX-License-Identifier: Apache-2.0
// libgpulens_kernels.so: loaded into every CUDA process of a `gpulens run
// --kernels` job, by the driver (CUDA_INJECTION64_PATH, which calls
// InitializeInjection from cuInit) and by the dynamic loader (LD_PRELOAD, so that
// the two CUPTI entry points below stand in front of libcupti's own).
//
// It records GPU activity with the CUPTI Activity API only: kernels, copies,
// memsets, synchronisations, device properties, and the job's NVTX ranges as
// CUPTI marker records. It never subscribes to the Callback API, which admits
// one subscriber per process, so a profiler the job starts itself (torch.profiler,
// kineto) still can (except under the detach experiment, detach.hpp). When the job registers its
// own activity buffers, this library flushes what it has, steps aside and says so in its record:
// the job's profiler then gets every record, as it would alone.
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
// it goes (kernels/chunk_record.hpp, version 4): bounded lines as each window
// closes (traced whole: every kChunkSeconds), and an end line at exit. `gpulens
// run` moves the lines into the recording. With $GPULENS_KERNELS_AGENT (set for a
// job anywhere on the node, docs/kernels-agent.md) each chunk's summary also goes
// to the node's gpulens-serve as one datagram that never waits (agent_link.hpp);
// without GPULENS_KERNELS_DIR it is the only output, traced in the node's
// windows (schedule.hpp, node_schedule). Nothing here may change what the job
// does: every failure ends in a record that says why, never in an exit or a
// message on the job's streams.
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "inject/detach.hpp"
#include "inject/inject_state.hpp"
#include "inject/trace_control.hpp"
#include "kernels/chunk_record.hpp"

#define GPULENS_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpulens::inject {

// $GPULENS_KERNELS_KINDS (a measurement knob of bench/kernels/cost.py, documented
// in docs/kernels.md): a comma list of kernel, memcpy, memset, sync, nvtx to record
// only those, so the cost of each kind on the job can be told apart. Unset: all.
// Device properties are always read (one record per GPU).
bool kind_wanted(CUpti_ActivityKind k) {
  static const std::string list = [] {
    const char* v = std::getenv("GPULENS_KERNELS_KINDS");
    return v != nullptr && *v != '\0' ? "," + std::string(v) + "," : std::string();
  }();
  if (list.empty() || k == CUPTI_ACTIVITY_KIND_DEVICE) return true;
  const char* name = k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ? ",kernel,"
                     : k == CUPTI_ACTIVITY_KIND_MEMCPY          ? ",memcpy,"
                     : k == CUPTI_ACTIVITY_KIND_MEMSET          ? ",memset,"
                     : k == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ? ",sync,"
                     : k == CUPTI_ACTIVITY_KIND_MARKER          ? ",nvtx,"
                                                                : ",other,";
  return list.find(name) != std::string::npos;
}

State& state() {
  static State* s =
      new State;  // never destroyed: exit handlers of other libraries may run after ours
  return *s;
}

std::int64_t unix_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string result_text(const Api& api, CUptiResult r) {
  const char* s = nullptr;
  if (api.result_string != nullptr && api.result_string(r, &s) == CUPTI_SUCCESS && s != nullptr) {
    return s;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;

// libcupti, opened once for both ways in: cuInit (InitializeInjection) and the
// job's first NVTX call (InitializeInjectionNvtx2), whichever comes first. Both
// must use the same copy: two CUPTIs in one process fight over the driver.
const CuptiLibrary& cupti_library() {
  static std::once_flag once;
  std::call_once(once, [] { state().library = open_cupti(); });
  return state().library;
}

const std::string& demangled(State& s, const char* mangled) {
  if (mangled == nullptr) mangled = "(unnamed)";
  if (auto at = s.names_by_address.find(mangled); at != s.names_by_address.end())
    return *at->second;
  auto it = s.names.find(mangled);
  if (it == s.names.end()) {
    int status = 0;
    char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    std::string name = (status == 0 && d != nullptr) ? d : mangled;
    std::free(d);
    if (name.size() > 1000) name.resize(1000);  // cutlass templates run to kilobytes
    it = s.names.emplace(mangled, std::move(name)).first;
  }
  // Bounded: a job that builds kernel names at run time (JIT) must not grow this
  // without end; past the bound the lookup by content still works.
  if (s.names_by_address.size() < 100000) s.names_by_address.emplace(mangled, &it->second);
  return it->second;
}

const char* copy_kind(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "unknown";
  }
}

const char* memory_kind(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "device_static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "managed_static";
    default:
      return "unknown";
  }
}

void seen(State& s, std::uint64_t start, std::uint64_t end) {
  if (start < s.first_ns) s.first_ns = start;
  if (end > s.last_ns) s.last_ns = end;
}

// Called with the mutex held. Record structs are read only up to fields that
// every CUPTI version since CUDA 11 lays out the same way.
void take(State& s, const CUpti_Activity* rec) {
  Collector& c = *s.collector;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      KernelKey key;
      key.device = k->deviceId;
      key.name = demangled(s, k->name);
      key.grid[0] = k->gridX, key.grid[1] = k->gridY, key.grid[2] = k->gridZ;
      key.block[0] = k->blockX, key.block[1] = k->blockY, key.block[2] = k->blockZ;
      key.registers = k->registersPerThread;
      key.static_smem = k->staticSharedMemory;
      key.dynamic_smem = k->dynamicSharedMemory;
      c.kernel(key, k->start, k->end, k->streamId);
      seen(s, k->start, k->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      CopyKey key{m->deviceId, copy_kind(m->copyKind), memory_kind(m->srcKind),
                  memory_kind(m->dstKind)};
      c.copy(key, m->bytes, m->start, m->end, m->streamId);
      seen(s, m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      c.memset(m->deviceId, m->bytes, m->start, m->end, m->streamId);
      seen(s, m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* y = reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec);
      c.sync(static_cast<int>(y->type), y->start, y->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(rec);
      // Instantaneous markers (nvtxMark) have no length: they are not kept.
      if ((m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0) {
        c.range_start(m->id, m->timestamp, m->name != nullptr ? m->name : "(unnamed)",
                      m->domain != nullptr ? m->domain : "");
      } else if ((m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0) {
        c.range_end(m->id, m->timestamp);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(rec);
      DeviceInfo info;
      info.id = d->id;
      info.name = d->name != nullptr ? d->name : "";
      info.sms = d->numMultiprocessors;
      info.max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
      info.max_warps_per_sm = d->maxWarpsPerMultiprocessor;
      info.max_threads_per_sm = d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
      info.registers_per_sm = d->maxRegistersPerMultiprocessor;
      info.shared_per_sm = d->maxSharedMemoryPerMultiprocessor;
      info.cc_major = d->computeCapabilityMajor;
      info.cc_minor = d->computeCapabilityMinor;
      c.device(info);
      break;
    }
    default:
      break;
  }
}

}  // namespace

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid) {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (s.collector != nullptr) {
      CUpti_Activity* rec = nullptr;
      while (s.api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) take(s, rec);
      size_t dropped = 0;
      if (s.api.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS) s.collector->dropped(dropped);
    }
  }
  std::free(buffer);
}

namespace {

std::string canonical(const char* path) {
  char buf[PATH_MAX];
  return realpath(path, buf) != nullptr ? std::string(buf) : std::string(path);
}

// Whether the job's NVTX ranges reached us, and if not why, in the record's terms.
nlohmann::json nvtx_status(const State& s) {
  if (s.nvtx_forwarded > 0 && s.nvtx_error.empty()) return {{"status", "ok"}};
  if (!s.nvtx_error.empty()) return {{"status", "cupti_error"}, {"reason", s.nvtx_error}};
  if (s.nvtx_called && s.library.handle == nullptr) {
    return {{"status", "no_cupti"}};  // the record's own status says why
  }
  const char* env = std::getenv("NVTX_INJECTION64_PATH");
  if (env == nullptr || *env == '\0') {
    return {{"status", "not_set"},
            {"reason",
             "NVTX_INJECTION64_PATH was not set in this process, so NVTX ranges "
             "reach no tool"}};
  }
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&nvtx_status), &self) != 0 && self.dli_fname != nullptr &&
      canonical(env) != canonical(self.dli_fname)) {
    return {{"status", "injection_taken"},
            {"reason", std::string("NVTX_INJECTION64_PATH names another tool (") + env +
                           "): the job's NVTX ranges go to it"}};
  }
  return {{"status", "unused"}};  // ours, and the job made no NVTX call
}

kernels::ProcessRecord process_record(const State& s) {
  kernels::ProcessRecord p;
  char exe[512] = {};
  if (readlink("/proc/self/exe", exe, sizeof exe - 1) > 0) p.exe = exe;
  p.cupti_path = s.library.path;
  p.cupti_version = s.cupti_version;
  if (s.library.handle == nullptr) p.cupti_searched = s.library.searched;
  p.base_ns = s.base_ns;
  p.base_unix_ns = s.base_unix_ns;
  if (s.schedule) {
    p.sampling = kernels::ProcessRecord::Sampling{s.schedule->first_s, s.schedule->window_s,
                                                  s.schedule->every_s, s.schedule->ramp_s};
  }
  p.schedule_error = s.schedule_error;
  if (const char* kinds = std::getenv("GPULENS_KERNELS_KINDS"); kinds != nullptr)
    p.kinds = kinds;  // a measurement run recorded only these
  return p;
}

// Appends whole lines to this process's record file in one write: a reader never
// sees half a line unless the process dies inside the write.
void append_lines(State& s, const std::vector<std::string>& lines) {
  if (lines.empty() || s.out_dir.empty()) return;  // summaries to the agent only
  std::string text;
  for (const auto& l : lines) text += l + '\n';
  if (s.record_fd < 0) {
    const std::string path = s.out_dir + "/kernels-" + std::to_string(getpid()) + ".jsonl";
    s.record_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (s.record_fd < 0) return;  // `gpulens run` then says no process wrote a record
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(s.record_fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void ensure_process_line(State& s) {
  if (s.process_written) return;
  s.process_written = true;
  append_lines(s, kernels::encode_process(getpid(), process_record(s)));
}

}  // namespace

void write_chunk(State& s, std::uint64_t start, std::uint64_t end, bool window) {
  std::lock_guard writing(s.writing);
  if (s.written) return;  // the end is out (or a forked child): nothing more
  Drained d;
  {
    std::lock_guard lock(s.mutex);
    if (s.collector == nullptr) return;
    d = s.collector->drain();
  }
  ensure_process_line(s);
  d.chunk.seq = s.chunks++;
  d.chunk.start_ns = static_cast<std::int64_t>(start - s.base_ns);
  d.chunk.end_ns = static_cast<std::int64_t>(end - s.base_ns);
  d.chunk.window = window;
  if (!s.out_dir.empty()) {
    if (!d.names.empty()) append_lines(s, kernels::encode_names(getpid(), d.chunk.seq, d.names));
    append_lines(s, kernels::encode_chunk(getpid(), d.chunk));
  }
  if (s.agent) s.agent->on_chunk(d.names, d.chunk, s.base_unix_ns);
}

namespace {

void write_end(State& s) {
  std::lock_guard writing(s.writing);
  if (s.written || s.out_dir.empty()) return;
  ensure_process_line(s);
  kernels::EndRecord e;
  e.status = s.status;
  e.reason = s.reason;
  if (s.yielded_ns >= 0) e.yielded_ns = s.yielded_ns;
  if (s.first_ns <= s.last_ns) {
    e.activity = std::make_pair(static_cast<std::int64_t>(s.first_ns - s.base_ns),
                                static_cast<std::int64_t>(s.last_ns - s.base_ns));
  }
  const nlohmann::json nvtx = nvtx_status(s);
  e.nvtx_status = nvtx.value("status", "");
  e.nvtx_reason = nvtx.value("reason", "");
  {
    std::lock_guard lock(s.mutex);
    if (s.collector != nullptr) e.unmatched = s.collector->unmatched_ranges();
  }
  e.chunks = s.chunks;
  e.detaches = s.detaches.load();
  e.detach_max_ns = s.detach_max_ns.load();
  e.detach_note = s.detach_note;
  e.agent = s.agent != nullptr || !s.agent_note.empty();
  if (s.agent) e.agent_sent = s.agent->sent(), e.agent_dropped = s.agent->dropped();
  e.agent_note = s.agent_note;
  append_lines(s, kernels::encode_end(getpid(), e));
  s.written = true;
  if (s.record_fd >= 0) close(s.record_fd);
  s.record_fd = -1;
}

void at_exit() {
  State& s = state();
  // A forked child has no window thread and no GPU work of its own; its locks may
  // have been held by a thread that does not exist in it.
  if (!s.started || s.forked_child) return;
  stop_tracing(s);  // closes the open window, and everything CUPTI holds comes in
  if (s.attached) {
    std::uint64_t now = 0;
    s.api.timestamp(&now);
    // The last window, if the window thread had not written it; else what ran
    // after it (work queued at its close) as a chunk outside the windows.
    if (s.windows.size() > s.windows_written) {
      write_chunk(s, s.windows.back().first, s.windows.back().second, true);
      s.windows_written = s.windows.size();
    } else {
      write_chunk(s, s.chunk_start_ns, now, false);
    }
  }
  write_end(s);
}

void in_forked_child() {
  // A fork of a CUDA process (a DataLoader worker) shares our memory but not the
  // GPU work: it must not write the parent's record again under its own pid.
  state().written = true;
  state().forked_child = true;
}

template <typename F>
bool resolve(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

// The job's first CUDA start, shared by its processes through the records
// directory: the first process to start CUDA puts its time there (a file linked
// into place whole, so no process reads a half-written one); the others read it.
// `now` when the directory cannot say (the process's own start then anchors it).
std::int64_t job_origin_ns(const std::string& dir, std::int64_t now) {
  const std::string path = dir + "/" + kOriginFile;
  const std::string mine = path + "." + std::to_string(::getpid());
  const std::string text = std::to_string(now);
  if (const int fd = ::open(mine.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); fd >= 0) {
    const bool whole = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    const bool linked = whole && ::link(mine.c_str(), path.c_str()) == 0;
    ::unlink(mine.c_str());
    if (linked) return now;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return now;
  char buf[32] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return now;
  char* end = nullptr;
  errno = 0;
  const long long origin = std::strtoll(buf, &end, 10);
  // Written by a process of this job, so not after this one's start.
  if (errno != 0 || end == buf || origin <= 0 || origin > now) return now;
  return origin;
}

int initialize() {
  State& s = state();
  const char* dir = std::getenv("GPULENS_KERNELS_DIR");
  const char* agent = std::getenv("GPULENS_KERNELS_AGENT");
  const bool to_file = dir != nullptr && *dir != '\0';
  const bool to_agent = agent != nullptr && *agent != '\0';
  if (!to_file && !to_agent) return 1;  // neither gpulens run nor the agent asked: do nothing
  if (to_file) s.out_dir = dir;
  if (to_agent) {
    std::string why;
    const std::string socket = agent_socket_from_env(agent, why);
    if (!socket.empty()) {
      s.agent = std::make_unique<AgentLink>(socket);
    } else {
      s.agent_note = why;  // said in the record's end line, if there is a record
      if (!to_file) return 1;
    }
  }
  s.started = true;
  if (!to_file && std::getenv("GPULENS_KERNELS_SCHEDULE") == nullptr) {
    s.schedule = node_schedule();  // opted in outside gpulens run: the node's windows
  }
  if (const char* text = std::getenv("GPULENS_KERNELS_SCHEDULE");
      text != nullptr && *text != '\0') {
    s.schedule = parse_schedule(text);
    if (!s.schedule) {
      s.schedule_error = std::string("GPULENS_KERNELS_SCHEDULE '") + text +
                         "' is not EPOCH_NS:FIRST_S:WINDOW_S:EVERY_S; the whole job was traced";
    } else if (s.schedule->whole_job()) {
      s.schedule.reset();
    } else if (s.schedule->spread()) {
      s.schedule->origin_unix_ns = to_file ? job_origin_ns(s.out_dir, unix_now_ns()) : 0;
    }
  }
  s.base_unix_ns = unix_now_ns();
  std::atexit(at_exit);
  pthread_atfork(nullptr, nullptr, in_forked_child);
  if (s.job_registered_first) {
    s.status = "job_profiler";
    s.reason = "the job registered its own CUPTI activity buffers before CUDA started";
    return 1;
  }
  cupti_library();
  if (s.library.handle == nullptr) {
    s.status = "no_cupti";
    s.reason = "libcupti was not found";
    return 1;
  }
  void* h = s.library.handle;
  Api& a = s.api;
  if (!resolve(h, "cuptiActivityRegisterCallbacks", a.register_callbacks) ||
      !resolve(h, "cuptiActivityEnable", a.enable) ||
      !resolve(h, "cuptiActivityDisable", a.disable) ||
      !resolve(h, "cuptiActivityFlushAll", a.flush_all) ||
      !resolve(h, "cuptiActivityGetNextRecord", a.next_record) ||
      !resolve(h, "cuptiActivityGetNumDroppedRecords", a.dropped) ||
      !resolve(h, "cuptiGetTimestamp", a.timestamp) ||
      !resolve(h, "cuptiGetResultString", a.result_string) ||
      !resolve(h, "cuptiGetVersion", a.version)) {
    s.status = "no_cupti";
    s.reason = s.library.path + " lacks the CUPTI Activity API";
    return 1;
  }
  if (s.schedule && detach_wanted()) {
    // Optional: without them CUPTI stays attached between windows (detach.hpp).
    resolve(h, "cuptiSubscribe", a.subscribe);
    resolve(h, "cuptiUnsubscribe", a.unsubscribe);
    resolve(h, "cuptiEnableDomain", a.enable_domain);
    resolve(h, "cuptiFinalize", a.finalize);
    s.detach_on = true;
  }
  s.active = true;
  if (s.schedule) {
    // CUPTI is first touched when the first window opens: here, inside cuInit, when
    // it is open already (as a whole-job trace attaches), else on the window thread.
    open_window_if_due(s);
    start_window_thread();
  } else if (!trace_whole_job(s)) {
    s.active = false;
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
  State& s = state();
  const char* dir = std::getenv("GPULENS_KERNELS_DIR");
  if (dir == nullptr || *dir == '\0') return 0;  // loaded outside gpulens run
  const CuptiLibrary& lib = cupti_library();
  if (lib.handle == nullptr) {
    std::lock_guard lock(s.mutex);
    s.nvtx_called = true;
    return 0;  // the record says no_cupti
  }
  using Init = int (*)(NvtxGetExportTable);
  auto real = reinterpret_cast<Init>(dlsym(lib.handle, "InitializeInjectionNvtx2"));
  const int ok = real != nullptr ? real(get_export_table) : 0;
  std::lock_guard lock(s.mutex);
  if (ok != 0) {
    ++s.nvtx_forwarded;
  } else if (s.nvtx_error.empty()) {
    s.nvtx_error = real == nullptr ? lib.path + " has no InitializeInjectionNvtx2"
                                   : lib.path + ": InitializeInjectionNvtx2 failed";
  }
  return ok;
}

GPULENS_EXPORT int InitializeInjection(void) {
  static std::once_flag once;
  static int result = 1;
  std::call_once(once, [] { result = gpulens::inject::initialize(); });
  return result;
}

// The job (torch.profiler through kineto, or any CUPTI client) registers its own
// activity buffers: CUPTI keeps one pair of callbacks per process, so ours would
// be replaced and the two would take each other's records. Flush ours, step
// aside, note when, and pass the call on to the real libcupti.
GPULENS_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
  using namespace gpulens::inject;
  State& s = state();
  using Fn = decltype(&::cuptiActivityRegisterCallbacks);
  Fn real = s.api.register_callbacks;
  if (real == nullptr)
    real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "cuptiActivityRegisterCallbacks"));
  if (requested != buffer_requested) {
    if (!s.started) {
      s.job_registered_first = true;
    } else if (s.active) {
      stop_tracing(s);
      std::lock_guard lock(s.mutex);
      if (s.collector != nullptr) {  // else it came before the first window
        std::uint64_t now = 0;
        s.api.timestamp(&now);
        s.yielded_ns = static_cast<std::int64_t>(now - s.base_ns);
      }
      s.status = "job_profiler";
      s.reason = "the job started its own CUPTI profiler (e.g. torch.profiler)";
    }
  }
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return real(requested, completed);
}

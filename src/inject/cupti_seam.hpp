// SPDX-License-Identifier: Apache-2.0
#pragma once
// The injection library's one seam onto CUPTI (libgpulens_kernels.so): the libcupti
// the job uses, opened once; the Activity API entry points resolved from it; the
// kinds recorded; and the status the record's end line gives (ok, no_cupti,
// cupti_error, job_profiler) with its reason, and whether the job's NVTX ranges
// reached CUPTI. Every call into libcupti goes through here, so what the library
// asks of CUPTI can be read in one file.
//
// Only the Activity API: the library never subscribes to the Callback API, which
// admits one subscriber per process, so a profiler the job starts itself
// (torch.profiler, kineto) still can.
#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "inject/cupti_loader.hpp"

namespace gpulens::inject {

// libcupti's entry points, resolved from the copy the job uses.
struct Api {
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  // Never called by this library: passed the job's call (entry_points.cpp). Optional.
  decltype(&::cuptiActivitySetAttribute) set_attribute = nullptr;
  decltype(&::cuptiActivityEnable) enable = nullptr;
  decltype(&::cuptiActivityDisable) disable = nullptr;
  decltype(&::cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&::cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) dropped = nullptr;
  decltype(&::cuptiGetTimestamp) timestamp = nullptr;
  decltype(&::cuptiGetResultString) result_string = nullptr;
  decltype(&::cuptiGetVersion) version = nullptr;
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

// The per-launch kinds by the names $GPULENS_KERNELS_KINDS and the record's
// `kinds` give them (docs/kernels.md).
struct KindName {
  CUpti_ActivityKind kind;
  std::string_view name;
};
inline constexpr KindName kKindNames[] = {{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel"},
                                          {CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
                                          {CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
                                          {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "sync"},
                                          {CUPTI_ACTIVITY_KIND_MARKER, "nvtx"}};

// $GPULENS_KERNELS_KINDS (docs/kernels.md): only these kinds are recorded.
bool kind_wanted(CUpti_ActivityKind k);

// What the record's end line says of CUPTI and of NVTX.
struct CuptiStatus {
  std::string status = "ok";  // ok | no_cupti | cupti_error | job_profiler
  std::string reason;
  std::optional<std::int64_t> yielded_ns;  // relative, when the job's profiler took over
  std::string nvtx_status, nvtx_reason;
};

class CuptiSeam {
 public:
  // libcupti, opened once for both ways in: cuInit (InitializeInjection) and the
  // job's first NVTX call (InitializeInjectionNvtx2), whichever comes first. Both
  // must use the same copy: two CUPTIs in one process fight over the driver.
  const CuptiLibrary& open();
  const CuptiLibrary& library() const { return library_; }  // after open()
  // The Activity API's entry points; false (the status then says why) when
  // libcupti was not found or lacks them.
  bool resolve();
  const Api& api() const { return api_; }
  std::string result_text(CUptiResult r) const;

  // Registers our buffer callbacks, reads CUPTI's version and switches every
  // wanted kind on; once per process (CUPTI then stays attached, kinds off,
  // between windows). False when CUPTI refused (the status says why). The
  // caller (trace_control.cpp) orders attaching and switching.
  bool attach(CUpti_BuffersCallbackRequestFunc requested,
              CUpti_BuffersCallbackCompleteFunc completed);
  bool attached() const { return attached_.load(std::memory_order_acquire); }
  // CUPTI's synchronisation records are left off, decided at attach: the job may
  // start its own profiler (job_may_profile) and, once we had switched that kind
  // on and off, PyTorch's profiler failed at its end in about half the jobs on an
  // H200; with it off, in 1 of 30 (docs/kernels.md, "A profiler inside the job").
  // $GPULENS_KERNELS_KINDS, when set, decides instead, and GPULENS_KERNELS_SYNCS=1
  // (`gpulens run --kernels-syncs`) records them anyway.
  bool syncs_withheld() const { return syncs_withheld_.load(std::memory_order_acquire); }
  // Switches the per-launch kinds on. False when CUPTI refuses one the view
  // cannot do without: the status then says why and nothing stays on.
  bool enable_per_launch_kinds();
  // The names of the kinds enable_per_launch_kinds switches on, comma-separated in
  // kKindNames' order: what the record's `kinds` says when it is not all of them.
  std::string recorded_kinds() const;
  void disable_per_launch_kinds();
  // For good: everything CUPTI holds is delivered to our buffers (the buffer
  // callback runs on this thread or CUPTI's) and every kind goes off.
  void stop();
  // What CUPTI has finished goes to our buffers; `forced` also takes the
  // records still being written.
  void flush(bool forced);
  std::uint64_t now() const;  // CUPTI's clock, ns
  std::uint32_t version() const;

  // The status and its reason; a later failure replaces an earlier one.
  void fail(std::string status, std::string reason);
  void add_reason(const std::string& what);  // a lost kind: the view stays whole
  // The job registered its own activity buffers: before CUDA started (nothing
  // recorded), or at `yielded_ns` (relative) after we had recorded.
  void job_profiler_took_over(std::optional<std::int64_t> yielded_ns, std::string reason);
  // NVTX's loader called us; `forwarded`: libcupti accepted, else `error` says why.
  void nvtx_called(bool forwarded, std::string error);
  CuptiStatus status() const;

 private:
  std::once_flag opened_;
  CuptiLibrary library_;  // written once, under `opened_`
  Api api_;               // written once, in resolve() (cuInit), before any thread reads it
  std::atomic<bool> attached_{false};
  std::atomic<bool> syncs_withheld_{false};  // written once in attach(), before any kind is on
  // The status, NVTX's and the version: written by the window thread, the job's
  // threads (its profiler taking over, its NVTX calls) and cuInit, read at exit.
  // A leaf lock: nothing else is taken while it is held.
  mutable std::mutex mutex_;
  std::string status_ = "ok";
  std::string reason_;
  std::optional<std::int64_t> yielded_ns_;
  std::uint32_t version_ = 0;
  int nvtx_forwarded_ = 0;
  bool nvtx_called_ = false;
  std::string nvtx_error_;  // CUPTI refused NVTX or its marker records
};

}  // namespace gpulens::inject

// SPDX-License-Identifier: Apache-2.0
#include "inject/cupti_seam.hpp"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <utility>

namespace gpulens::inject {

// $GPULENS_KERNELS_KINDS (a measurement knob of bench/kernels/cost.py, documented
// in docs/kernels.md): a comma list of kernel, memcpy, memset, sync, nvtx to record
// only those, so the cost of each kind on the job can be told apart. Unset: all.
// Device properties are always read (one record per GPU).
bool kind_wanted(CUpti_ActivityKind k) {
  static const std::string list = [] {
    const char* v = std::getenv("GPULENS_KERNELS_KINDS");
    std::string commas;  // appended, not "," + v: GCC 12's -O3 -Wrestrict misfires on that
    if (v != nullptr && *v != '\0') commas.append(",").append(v).append(",");
    return commas;
  }();
  if (list.empty() || k == CUPTI_ACTIVITY_KIND_DEVICE) return true;
  for (const KindName& n : kKindNames) {
    if (n.kind != k) continue;
    std::string needle = ",";
    needle.append(n.name).append(",");
    return list.find(needle) != std::string::npos;
  }
  return false;
}

namespace {

template <typename F>
bool resolve_one(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

std::string canonical(const char* path) {
  char buf[PATH_MAX];
  return realpath(path, buf) != nullptr ? std::string(buf) : std::string(path);
}

}  // namespace

const CuptiLibrary& CuptiSeam::open() {
  std::call_once(opened_, [this] { library_ = open_cupti(); });
  return library_;
}

bool CuptiSeam::resolve() {
  open();
  void* h = library_.handle;
  if (h == nullptr) {
    fail("no_cupti", "libcupti was not found");
    return false;
  }
  Api& a = api_;
  if (!resolve_one(h, "cuptiActivityRegisterCallbacks", a.register_callbacks) ||
      !resolve_one(h, "cuptiActivityEnable", a.enable) ||
      !resolve_one(h, "cuptiActivityDisable", a.disable) ||
      !resolve_one(h, "cuptiActivityFlushAll", a.flush_all) ||
      !resolve_one(h, "cuptiActivityGetNextRecord", a.next_record) ||
      !resolve_one(h, "cuptiActivityGetNumDroppedRecords", a.dropped) ||
      !resolve_one(h, "cuptiGetTimestamp", a.timestamp) ||
      !resolve_one(h, "cuptiGetResultString", a.result_string) ||
      !resolve_one(h, "cuptiGetVersion", a.version)) {
    fail("no_cupti", library_.path + " lacks the CUPTI Activity API");
    return false;
  }
  resolve_one(h, "cuptiActivitySetAttribute", a.set_attribute);
  return true;
}

std::string CuptiSeam::result_text(CUptiResult r) const {
  const char* s = nullptr;
  if (api_.result_string != nullptr && api_.result_string(r, &s) == CUPTI_SUCCESS && s != nullptr) {
    return s;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

bool CuptiSeam::attach(CUpti_BuffersCallbackRequestFunc requested,
                       CUpti_BuffersCallbackCompleteFunc completed) {
  std::uint32_t v = 0;
  api_.version(&v);
  {
    std::lock_guard lock(mutex_);
    version_ = v;
  }
  if (const CUptiResult r = api_.register_callbacks(requested, completed); r != CUPTI_SUCCESS) {
    fail("cupti_error", "cuptiActivityRegisterCallbacks: " + result_text(r));
    return false;
  }
  const char* kinds = std::getenv("GPULENS_KERNELS_KINDS");
  const char* syncs = std::getenv("GPULENS_KERNELS_SYNCS");  // `gpulens run --kernels-syncs`
  const bool asked = (kinds != nullptr && *kinds != '\0') || (syncs != nullptr && *syncs == '1');
  syncs_withheld_.store(!asked && job_may_profile(library_), std::memory_order_release);
  attached_.store(true, std::memory_order_release);
  if (kind_wanted(CUPTI_ACTIVITY_KIND_DEVICE)) {
    if (const CUptiResult r = api_.enable(CUPTI_ACTIVITY_KIND_DEVICE); r != CUPTI_SUCCESS) {
      // Without device properties the view takes SM limits from its own table.
      add_reason("cuptiActivityEnable(DEVICE): " + result_text(r));
    }
  }
  return enable_per_launch_kinds();
}

bool CuptiSeam::enable_per_launch_kinds() {
  for (CUpti_ActivityKind k : kKinds) {
    if (!per_launch_kind(k) || !kind_wanted(k)) continue;
    if (k == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && syncs_withheld()) continue;
    const CUptiResult r = api_.enable(k);
    if (r == CUPTI_SUCCESS) continue;
    const std::string what =
        "cuptiActivityEnable(" + std::to_string(static_cast<int>(k)) + "): " + result_text(r);
    if (k == CUPTI_ACTIVITY_KIND_MARKER) {
      // Without it there are no NVTX ranges; the kernel view stays whole.
      std::lock_guard lock(mutex_);
      if (nvtx_error_.empty()) nvtx_error_ = what;
      continue;
    }
    if (optional_kind(k)) {
      add_reason(what);  // the view loses synchronisations, not its kernels
      continue;
    }
    // A profiler (Nsight) holding the device, or a CUPTI too old: step aside.
    fail("cupti_error", what);
    for (CUpti_ActivityKind d : kKinds) api_.disable(d);
    return false;
  }
  return true;
}

std::string CuptiSeam::recorded_kinds() const {
  std::string out;
  for (const KindName& n : kKindNames) {
    if (!per_launch_kind(n.kind) || !kind_wanted(n.kind)) continue;
    if (n.kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && syncs_withheld()) continue;
    if (!out.empty()) out += ',';
    out += n.name;
  }
  return out;
}

void CuptiSeam::disable_per_launch_kinds() {
  for (CUpti_ActivityKind k : kKinds) {
    if (per_launch_kind(k)) api_.disable(k);
  }
}

// Every kind off first, then a forced flush: CUPTI then hands back every buffer it
// took from us and asks for no new one before the job's profiler registers its own
// callbacks. (Flushed first, a launch in between could leave a fresh buffer of ours
// with CUPTI, later handed to the job's callbacks.) This order alone did not end the
// torch.profiler failures of docs/kernels.md, "A profiler inside the job".
void CuptiSeam::stop() {
  if (!attached()) return;
  for (CUpti_ActivityKind k : kKinds) api_.disable(k);
  api_.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // our buffer callback takes the records' lock
}

void CuptiSeam::flush(bool forced) {
  api_.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

std::uint64_t CuptiSeam::now() const {
  std::uint64_t t = 0;
  api_.timestamp(&t);
  return t;
}

std::uint32_t CuptiSeam::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

void CuptiSeam::fail(std::string status, std::string reason) {
  std::lock_guard lock(mutex_);
  status_ = std::move(status);
  reason_ = std::move(reason);
}

void CuptiSeam::add_reason(const std::string& what) {
  std::lock_guard lock(mutex_);
  if (reason_.find(what) == std::string::npos) reason_ += (reason_.empty() ? "" : "; ") + what;
}

void CuptiSeam::job_profiler_took_over(std::optional<std::int64_t> yielded_ns, std::string reason) {
  std::lock_guard lock(mutex_);
  status_ = "job_profiler";
  reason_ = std::move(reason);
  if (yielded_ns) yielded_ns_ = yielded_ns;
}

void CuptiSeam::nvtx_called(bool forwarded, std::string error) {
  std::lock_guard lock(mutex_);
  nvtx_called_ = true;
  if (forwarded) {
    ++nvtx_forwarded_;
  } else if (nvtx_error_.empty()) {
    nvtx_error_ = std::move(error);
  }
}

CuptiStatus CuptiSeam::status() const {
  std::lock_guard lock(mutex_);
  CuptiStatus out{status_, reason_, yielded_ns_, "", ""};
  // Whether the job's NVTX ranges reached us, and if not why, in the record's terms.
  if (nvtx_forwarded_ > 0 && nvtx_error_.empty()) {
    out.nvtx_status = "ok";
  } else if (!nvtx_error_.empty()) {
    out.nvtx_status = "cupti_error", out.nvtx_reason = nvtx_error_;
  } else if (nvtx_called_ && library_.handle == nullptr) {
    out.nvtx_status = "no_cupti";  // the record's own status says why
  } else if (const char* env = std::getenv("NVTX_INJECTION64_PATH");
             env == nullptr || *env == '\0') {
    out.nvtx_status = "not_set";
    out.nvtx_reason =
        "NVTX_INJECTION64_PATH was not set in this process, so NVTX ranges reach no tool";
  } else if (Dl_info self{}; dladdr(reinterpret_cast<void*>(&kind_wanted), &self) != 0 &&
                             self.dli_fname != nullptr &&
                             canonical(env) != canonical(self.dli_fname)) {
    out.nvtx_status = "injection_taken";
    out.nvtx_reason = std::string("NVTX_INJECTION64_PATH names another tool (") + env +
                      "): the job's NVTX ranges go to it";
  } else {
    out.nvtx_status = "unused";  // ours, and the job made no NVTX call
  }
  return out;
}

}  // namespace gpulens::inject

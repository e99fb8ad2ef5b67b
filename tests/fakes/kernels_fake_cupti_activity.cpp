// SPDX-License-Identifier: Apache-2.0
// A stand-in for libcupti's Activity API, for machines with no GPU: it accepts
// every call, delivers no records, and logs each call that attaches or switches
// (one line: what, a number, CLOCK_MONOTONIC ns) to $FAKE_CUPTI_LOG. With it the
// injection library's window thread runs as on a GPU, and a test sees when CUPTI
// was attached and recording (tests/unit/inject/run_kernels_test.cpp). With
// $FAKE_CUPTI_REFUSE set to a kind's number, it refuses to enable that kind, as a
// CUPTI held by another profiler would (tests/unit/inject/cupti_seam_test.cpp).
#include <cupti.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

void log_call(const char* what, int n) {
  const char* path = std::getenv("FAKE_CUPTI_LOG");
  if (path == nullptr) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s %d %llu\n", what, n, static_cast<unsigned long long>(now_ns()));
    std::fclose(f);
  }
}

}  // namespace

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc,
                                                       CUpti_BuffersCallbackCompleteFunc) {
  log_call("register", 0);
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attribute, size_t*,
                                                  void*) {
  log_call("attribute", static_cast<int>(attribute));
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (const char* refuse = std::getenv("FAKE_CUPTI_REFUSE");
      refuse != nullptr && std::atoi(refuse) == static_cast<int>(kind)) {
    log_call("refuse", static_cast<int>(kind));
    return CUPTI_ERROR_NOT_COMPATIBLE;
  }
  log_call("enable", static_cast<int>(kind));
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  log_call("disable", static_cast<int>(kind));
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t) {
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t*, size_t, CUpti_Activity**) {
  return CUPTI_ERROR_MAX_LIMIT_REACHED;
}
FAKE_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 0;
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = now_ns();
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiGetResultString(CUptiResult, const char** str) {
  *str = "fake CUPTI error";
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
  *version = 0;
  return CUPTI_SUCCESS;
}

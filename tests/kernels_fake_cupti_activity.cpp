// A stand-in for libcupti's Activity API, for machines with no GPU: it accepts
// every call, delivers no records, and logs each switch of an activity kind (kind,
// on or off, CLOCK_MONOTONIC ns) to $FAKE_CUPTI_LOG. With it the injection
// library's window thread runs as on a GPU, and a test sees when tracing was on
// (tests/unit/kernels_run_test.cpp).
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

void log_switch(CUpti_ActivityKind kind, int on) {
  const char* path = std::getenv("FAKE_CUPTI_LOG");
  if (path == nullptr) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%d %d %llu\n", static_cast<int>(kind), on,
                 static_cast<unsigned long long>(now_ns()));
    std::fclose(f);
  }
}

}  // namespace

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc,
                                                       CUpti_BuffersCallbackCompleteFunc) {
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  log_switch(kind, 1);
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  log_switch(kind, 0);
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

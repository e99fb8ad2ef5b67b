// A stand-in for libcupti's Activity API, for machines with no GPU: it accepts
// every call, delivers no records, and logs each call that attaches, switches or
// detaches (one line: what, a number, CLOCK_MONOTONIC ns) to $FAKE_CUPTI_LOG. With
// $FAKE_CUPTI_API_CALLS set it plays a job that keeps calling CUDA: 20 ms after a
// callback domain is enabled it calls the subscriber as at a driver API exit.
// With it the injection library's window thread runs as on a GPU, and a test sees
// when CUPTI was attached and recording (tests/unit/kernels_run_test.cpp).
#include <cupti.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

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

CUpti_CallbackFunc subscriber_fn = nullptr;

}  // namespace

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc,
                                                       CUpti_BuffersCallbackCompleteFunc) {
  log_call("register", 0);
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
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
FAKE_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc fn,
                                       void*) {
  log_call("subscribe", 0);
  subscriber_fn = fn;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&subscriber_fn);
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) {
  log_call("unsubscribe", 0);
  subscriber_fn = nullptr;
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle,
                                          CUpti_CallbackDomain domain) {
  log_call("domain", static_cast<int>(domain));
  if (enable != 0 && domain == CUPTI_CB_DOMAIN_DRIVER_API && std::getenv("FAKE_CUPTI_API_CALLS")) {
    CUpti_CallbackFunc fn = subscriber_fn;
    std::thread([fn] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      CUpti_CallbackData data{};
      data.callbackSite = CUPTI_API_EXIT;
      if (fn != nullptr) fn(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, 0, &data);
    }).detach();
  }
  return CUPTI_SUCCESS;
}
FAKE_EXPORT CUptiResult cuptiFinalize() {
  log_call("finalize", 0);
  subscriber_fn = nullptr;
  return CUPTI_SUCCESS;
}

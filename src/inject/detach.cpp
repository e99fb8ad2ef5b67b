// SPDX-License-Identifier: Apache-2.0
#include "inject/detach.hpp"

#include <time.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace gpulens::inject {
namespace {

thread_local ThreadCalls t_calls;

std::uint64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
}

// Called by CUPTI at the entry and exit of every driver and runtime API call while
// a detach is armed (the callback domains are on only then), on the job's threads.
void CUPTIAPI on_api_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info == nullptr) return;
  State& s = state();
  if (info->callbackSite == CUPTI_API_ENTER) {
    s.detach_gate.enter(t_calls);
    return;
  }
  std::unique_lock<std::mutex> finalising;
  if (!s.detach_gate.leave(t_calls, finalising)) return;
  const std::uint64_t t0 = monotonic_ns();
  s.api.finalize();  // also removes our subscriber and every kind
  const std::uint64_t took = monotonic_ns() - t0;
  s.attached.store(false, std::memory_order_release);
  s.detaches.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t max = s.detach_max_ns.load(std::memory_order_relaxed);
  while (took > max && !s.detach_max_ns.compare_exchange_weak(max, took)) {
  }
}

void keep_attached(State& s, std::string why) {
  s.detach_on = false;
  s.detach_note = std::move(why) + "; CUPTI stayed attached between windows";
}

}  // namespace

bool detach_wanted() {
  const char* v = std::getenv("GPULENS_KERNELS_DETACH");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

void request_detach(State& s) {
  if (!s.detach_on || !s.attached.load()) return;
  if (s.api.subscribe == nullptr || s.api.enable_domain == nullptr || s.api.finalize == nullptr ||
      s.api.unsubscribe == nullptr) {
    keep_attached(s, s.library.path + " lacks the Callback API or cuptiFinalize");
    return;
  }
  if (const CUptiResult r = s.api.subscribe(
          &s.subscriber, reinterpret_cast<CUpti_CallbackFunc>(&on_api_call), nullptr);
      r != CUPTI_SUCCESS) {
    // The Callback API admits one subscriber: the job has its own tool.
    keep_attached(s, "cuptiSubscribe: " + result_text(s.api, r));
    return;
  }
  if (s.api.enable_domain(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
      s.api.enable_domain(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS) {
    s.api.unsubscribe(s.subscriber);
    keep_attached(s, "cuptiEnableDomain failed");
    return;
  }
  // Armed only now that both domains are on: a finalise frees the subscriber, and
  // nothing here may touch it after that (the first detaching version armed
  // before, and a job thread finalised between the two calls).
  s.detach_gate.arm();
}

void settle_detach(State& s) {
  // Not taken yet (no CUDA call came since): still attached, only the callbacks go.
  if (s.detach_gate.disarm()) s.api.unsubscribe(s.subscriber);
}

}  // namespace gpulens::inject

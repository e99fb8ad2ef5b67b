// SPDX-License-Identifier: Apache-2.0
// Small helpers shared by the NVML collector's files.
#include <time.h>

#include <chrono>
#include <thread>

#include "core/clock.hpp"
#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources::nvml_detail {

Clocks resolve_clocks(const NvmlClock& clock) {
  Clocks c{clock.monotonic_s, clock.unix_s, clock.sleep_s};
  if (!c.monotonic_s) {
    c.monotonic_s = [] { return monotonic_now(); };
  }
  if (!c.unix_s) {
    c.unix_s = [] { return unix_now(); };
  }
  if (!c.sleep_s) {
    c.sleep_s = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  }
  return c;
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string reason_for(nvml::Return r, const char* call) {
  switch (r) {
    case nvml::Return::NotSupported:
      return "n/a: not supported by this GPU";
    case nvml::Return::NoPermission:
      return std::string("n/a: no permission (") + call + " returned NVML_ERROR_NO_PERMISSION)";
    case nvml::Return::FunctionNotFound:
      return std::string("n/a: this NVIDIA driver lacks ") + call;
    default:
      return std::string("n/a: ") + call + " failed with " + nvml_error_name(r);
  }
}

void add_unsupported(DeviceInfo& info, Metric m, const std::string& reason) {
  if (info.unsupported_reason(m) == nullptr) info.unsupported.push_back({m, reason});
}

}  // namespace gpulens::sources::nvml_detail

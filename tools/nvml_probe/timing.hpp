// SPDX-License-Identifier: Apache-2.0
#pragma once
// CPU time of the calling thread, and the tight-loop timing of one NVML call that
// gpulens_nvml_probe prints as a JSON line (call, cpu_us, user_us, sys_us, ...).
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

#include "sources/nvml/nvml_api.hpp"

namespace gpulens::probe {

inline double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// User and system CPU time of the calling thread, in seconds: a call that is mostly
// system time is driver (ioctl) work that no caller-side change can remove.
inline std::pair<double, double> thread_user_sys_s() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  const auto s = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return {s(r.ru_utime), s(r.ru_stime)};
}

template <typename Call>
void time_call(const char* name, int reps, Call&& call) {
  sources::nvml::Return last = sources::nvml::Return::Success;
  const double cpu0 = thread_cpu_s();
  const auto [user0, sys0] = thread_user_sys_s();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) last = call();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const auto [user1, sys1] = thread_user_sys_s();
  const nlohmann::json j = {{"call", name},
                            {"cpu_us", (thread_cpu_s() - cpu0) * 1e6 / reps},
                            {"user_us", (user1 - user0) * 1e6 / reps},
                            {"sys_us", (sys1 - sys0) * 1e6 / reps},
                            {"wall_us", wall * 1e6 / reps},
                            {"ret", sources::nvml_error_name(last)}};
  std::printf("%s\n", j.dump().c_str());
}

// time_call for one NVML entry point, which an older driver or the test fake may
// lack (NvmlApi leaves it null): a missing one is said as {"call", "missing"} and
// not called.
template <typename Fn, typename Call>
void time_nvml_call(const char* name, Fn fn, int reps, Call&& call) {
  if (fn == nullptr) {
    const nlohmann::json j = {{"call", name}, {"missing", true}};
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  time_call(name, reps, std::forward<Call>(call));
}

}  // namespace gpulens::probe

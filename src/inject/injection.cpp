// SPDX-License-Identifier: Apache-2.0
#include "inject/injection.hpp"

#include <time.h>

namespace gpulens::inject {

Injection& injection() {
  static Injection* in = new Injection;  // never destroyed: see injection.hpp
  return *in;
}

std::int64_t unix_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace gpulens::inject

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the agent keeps its history (times to read it back: core/duration.hpp).
#include <cmath>
#include <cstdint>
#include <string>

namespace gpulens::store {

// Where `gpulens serve` keeps its history unless told otherwise:
// $STATE_DIRECTORY (systemd), /var/lib/gpulens for root, else the XDG state dir.
std::string default_history_path();

// Unix seconds as the history stores them: whole milliseconds.
inline std::int64_t to_ms(double t) {
  return std::llround(t * 1000.0);
}

}  // namespace gpulens::store

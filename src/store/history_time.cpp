// SPDX-License-Identifier: Apache-2.0
#include "store/history_time.hpp"

#include <unistd.h>

#include <cstdlib>

namespace gpulens::store {

std::string default_history_path() {
  if (const char* dir = std::getenv("STATE_DIRECTORY"); dir && *dir) {
    const std::string first(dir);
    return first.substr(0, first.find(':')) + "/history.db";
  }
  if (geteuid() == 0) return "/var/lib/gpulens/history.db";
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/gpulens/history.db";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.local/state/gpulens/history.db";
  return "gpulens-history.db";
}

}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#include "http/open_files.hpp"

#include <cerrno>
#include <cstring>

namespace gpulens::http {

OpenFilesLimit raise_open_files_limit() {
  OpenFilesLimit out;
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    out.error = std::strerror(errno);
    return out;
  }
  out.before = out.now = lim.rlim_cur;
  out.hard = lim.rlim_max;
  if (lim.rlim_cur == lim.rlim_max) return out;
  rlimit raised = lim;
  raised.rlim_cur = lim.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) {
    out.error = std::strerror(errno);
    return out;
  }
  out.now = raised.rlim_cur;
  return out;
}

}  // namespace gpulens::http

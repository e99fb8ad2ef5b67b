// SPDX-License-Identifier: Apache-2.0
#pragma once
// The agent's open-files limit. Every connection is a descriptor, and the soft
// limit most systems start a process with is 1,024: with it, 1,100 idle
// sockets made every scrape wait in the backlog for seconds. The soft limit is
// raised to the hard one at start (systemd's LimitNOFILE, 65,536 in
// deploy/gpulens.service), which needs no privilege.
#include <sys/resource.h>

#include <string>

namespace gpulens::http {

struct OpenFilesLimit {
  rlim_t before = 0;  // the soft limit found
  rlim_t now = 0;     // the soft limit after
  rlim_t hard = 0;
  std::string error;  // why it could not be read or raised; empty when it was
};

// Raises the soft RLIMIT_NOFILE to the hard limit (never lowers it).
OpenFilesLimit raise_open_files_limit();

}  // namespace gpulens::http

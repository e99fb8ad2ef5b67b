// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the counts go: one file per process in $GPULENS_LAUNCHES_DIR,
// launches-<pid>-<first launch ns>.json, holding one launch record
// (kernels/record/launch_record.hpp). It is replaced whole (a temporary file and a
// rename) from a thread of the library's own, 1, 2, 4 and 8 s after the first launch
// and then every $GPULENS_LAUNCHES_EVERY_S seconds (10 by default; 0: at exit only),
// and at the process's exit: a process that never reaches exit (os._exit, exec, a
// kill) leaves its counts of the last write. With $GPULENS_LAUNCHES_AGENT ("1" or a
// socket path, as $GPULENS_KERNELS_AGENT) each write also goes to the node agent as one
// datagram that never waits (kernels/record/agent_socket.hpp), so that jobs started
// without `gpulens run` are counted too (docs/kernels-agent.md).
#include <atomic>
#include <cstdint>
#include <string>

#include "kernels/record/launch_record.hpp"
#include "launch_count/counts.hpp"

namespace gpulens::launch_count {

// 1 when $GPULENS_LAUNCHES_DIR or $GPULENS_LAUNCHES_AGENT names where the counts go, 0
// when neither does, -1 before they are read.
extern std::atomic<int> g_counting;
// Set at the process's first launch (a fork's child's first): the writer runs.
extern std::atomic<bool> g_writer_started;
int read_counting_setting();
void start_writer();

// Whether to count. Without either setting the library counts nothing and
// passes every launch on. Inline, as it runs on every launch: one relaxed load.
inline bool counting_on() {
  const int on = g_counting.load(std::memory_order_relaxed);
  return on > 0 || (on < 0 && read_counting_setting() > 0);
}

// At each launch: starts the writer thread at the process's first; one relaxed load.
inline void note_launch() {
  if (!g_writer_started.load(std::memory_order_relaxed)) start_writer();
}

// The record for `t`, demangled, the most launched first (exposed for the tests).
kernels::LaunchRecord make_record(const Totals& t, std::uint32_t pid, const std::string& comm,
                                  std::int64_t first_ns, std::int64_t now_ns, bool final);

}  // namespace gpulens::launch_count

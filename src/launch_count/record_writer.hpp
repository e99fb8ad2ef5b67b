// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the counts go: one file per process in $GPULENS_LAUNCHES_DIR,
// launches-<pid>-<first launch ns>.json, holding one launch record
// (kernels/record/launch_record.hpp). It is replaced whole (a temporary file and a
// rename) every $GPULENS_LAUNCHES_EVERY_S seconds (10 by default; 0: at exit only)
// from a thread of the library's own, and at the process's exit: a process that
// never reaches exit (os._exit, exec, a kill) leaves its counts of the last write.
#include <cstdint>
#include <string>

#include "kernels/record/launch_record.hpp"
#include "launch_count/counts.hpp"

namespace gpulens::launch_count {

// Whether $GPULENS_LAUNCHES_DIR names where to write; read once. Without it the
// library counts nothing and passes every launch on.
bool counting_on();

// At each launch: starts the writer thread on the process's first launch (and a
// fork's child's first); one relaxed load otherwise.
void note_launch();

// The record for `t`, demangled, the most launched first (exposed for the tests).
kernels::LaunchRecord make_record(const Totals& t, std::uint32_t pid, const std::string& comm,
                                  std::int64_t first_ns, std::int64_t now_ns, bool final);

}  // namespace gpulens::launch_count

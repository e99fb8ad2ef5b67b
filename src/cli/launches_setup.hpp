// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulens run`'s launch counts (on unless --no-launches): what the job's environment
// gets so that each of its processes loads libgpulens_launches.so (src/launch_count),
// and how the records they leave come back into the recording (docs/kernels.md,
// "Launch counts").
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/input_limits.hpp"

namespace gpulens::cli {

using EnvList = std::vector<std::pair<std::string, std::string>>;

struct LaunchesSetup {
  std::string records_dir;                    // where the processes write launches-<pid>-<ns>.json
  std::shared_ptr<const int> records_dir_fd;  // that directory, held open
  EnvList env;                                // for the job
  std::string unavailable;                    // non-empty: no launch counts, and why
};

// The counting library for a gpulens binary in `exe_dir`: beside it (a build tree),
// else in ../lib/gpulens (an install); empty when neither has it.
std::string find_launches_library(const std::string& exe_dir);

// Finds the library ($GPULENS_LAUNCHES_LIB, else beside the running binary), checks
// that it loads here, and makes `run_dir`/launches. Never fails: what is missing is
// said in `unavailable`, and the job runs without it.
LaunchesSetup prepare_launches(const std::string& run_dir);

// `lib` put first in the LD_PRELOAD of `env` (or of gpulens' own environment when
// `env` sets none), so that two libraries gpulens preloads and the user's own all load.
void prepend_preload(EnvList& env, const std::string& lib);

// Appends one {"x_launches": 1, ...} line per process record to the recording, or a
// line saying why a file was refused. At most kMaxLaunchRecordFiles files of
// kMaxLaunchRecordBytes each are read and kMaxLaunchRecordsMerged bytes written, the
// rest said in one line; the files are removed. Returns a line for the
// user when something went wrong, else empty.
std::string merge_launch_records(const LaunchesSetup& setup, const std::string& trace_path);

inline constexpr std::size_t kMaxLaunchRecordFiles = 4096;
inline constexpr std::size_t kMaxLaunchRecordBytes = std::size_t{2} << 20;  // a file
// What is written into the recording in all: less than its reader keeps
// (kMaxLaunchRecordTotalBytes), with room for the line that says what was left out.
inline constexpr std::size_t kMaxLaunchRecordsMerged = kMaxLaunchRecordTotalBytes - (1 << 20);

}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulens run --kernels`: what the job's environment gets so that every CUDA
// process loads libgpulens_kernels.so, and how the records the processes write at
// exit come back into the recording (docs/kernels.md).
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/input_limits.hpp"

namespace gpulens::cli {

struct KernelsSetup {
  std::string records_dir;  // where the job's processes write kernels-<pid>.json
  // That directory as gpulens made it, open: records are read and deleted through
  // it, so a job that swaps the path for a link to another directory redirects
  // nothing (closed when the last copy of the setup goes).
  std::shared_ptr<const int> records_dir_fd;
  std::vector<std::pair<std::string, std::string>> env;  // for the job
  std::string unavailable;  // non-empty: no kernel view, and why (said in the report)
  std::string status;       // the record status that goes with `unavailable`
};

// Tracing in windows: `window_s` seconds every `every_s`, the first at the job's
// first CUDA start and the next ones closer together at first (src/inject/schedule.hpp).
struct KernelsWindows {
  double window_s = 2;
  double every_s = 20;
};

// The injection library for a gpulens binary in `exe_dir`: beside it (a build
// tree), else in ../lib/gpulens (an install or package); empty when neither has it.
std::string find_kernels_library(const std::string& exe_dir);

// Finds the injection library ($GPULENS_KERNELS_LIB, else find_kernels_library of
// the running binary's directory) and prepares the environment. Never fails: what is missing ends
// up in `unavailable`, and the job runs as it would without --kernels. `windows` nullopt: the whole
// job is traced.
KernelsSetup prepare_kernels(const std::string& run_dir,
                             const std::optional<KernelsWindows>& windows);

// Appends one {"x_kernels": 3, ...} line per record to the recording, or one line
// saying why there is none (the library was not built, no process used CUDA).
// Returns a line for the user when something went wrong. At most `max_bytes` of
// the files and `max_records` records are taken in all (kMaxKernelRecordBytes,
// kMaxKernelRecordLines), and a file stops being read after
// kMaxRefusedRecordLines lines that are not records; each cut is said in an
// `unreadable` record.
std::string merge_kernel_records(const KernelsSetup& setup, const std::string& trace_path,
                                 std::size_t max_bytes = kMaxKernelRecordBytes,
                                 std::size_t max_records = kMaxKernelRecordLines);

}  // namespace gpulens::cli

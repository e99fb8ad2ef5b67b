// SPDX-License-Identifier: Apache-2.0
#pragma once
// What fixes read beside the counters: the price, the host, whether the GPU's
// processes are the user's own job, and what the kernel view saw.
#include <optional>
#include <string>

#include "diagnosis/kernel_evidence.hpp"

namespace gpulens::diagnosis {

struct FixContext {
  std::optional<double> price_per_gpu_hour;
  std::string currency = "$";
  std::optional<int> cpu_count;  // host cores, to read host_cpu_pct as cores
  // Inside `gpulens run` (a job_start mark was seen): the processes on the GPU
  // are the user's own job, not an abandoned process to end.
  bool in_job = false;
  // The kernel view of `gpulens run --kernels`, where the recording has one.
  std::optional<KernelEvidence> kernels;
};

}  // namespace gpulens::diagnosis

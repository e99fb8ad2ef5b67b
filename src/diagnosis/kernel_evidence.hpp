// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the kernel view of `gpulens run --kernels` (docs/kernels.md) says that a
// state's fixes can rest on, in the diagnosis's own terms: which kernels take
// the time and in which types, how often the host synchronises, which host
// memory the copies came from. Handed in by the command that has both the
// recording and its kernel view (cli/kernel_evidence.cpp); the diagnosis never
// reads kernel records. Job-wide: the view does not split its figures by phase.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpulens::diagnosis {

struct KernelEvidence {
  struct Kernel {
    std::string name;          // short name ("vectorized_elementwise_kernel")
    double share = 0;          // of kernel time
    std::string dtype;         // "bf16", "fp32", "int8", ... from the name; "" when it names none
    bool elementwise = false;  // an element-wise or reduction kernel (by name)
  };
  std::vector<Kernel> top;  // by GPU time, communication kernels left out
  // CUDA synchronisations (stream, device, event waits) and the host's time
  // blocked in them: per marked step where the job marks steps, else over the
  // traced time.
  // False when the view was recorded without CUDA synchronisations (a job
  // carrying its own profiler): the figures below are then absent, not zero.
  bool syncs_recorded = true;
  std::optional<double> syncs_per_step;
  std::optional<double> sync_s_per_step;
  std::uint64_t syncs = 0;
  std::optional<double> sync_share;  // host time blocked in them over the traced time
  // Synchronisations per kernel launch (both counted in the same windows):
  // how often the loop waits, whether or not each wait is long.
  std::optional<double> syncs_per_launch;
  // Element-wise kernels: launches per marked step, and distinct ones listed.
  std::optional<double> elementwise_per_step;
  std::size_t elementwise_kernels = 0;
  // Host-device copies seen from pageable and from pinned host memory (of at
  // least 1 MiB in all, as the kernel view's pageable finding counts them).
  bool pageable_copies = false;
  bool pinned_copies = false;
};

}  // namespace gpulens::diagnosis

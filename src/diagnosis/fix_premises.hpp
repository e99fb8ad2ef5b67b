// SPDX-License-Identifier: Apache-2.0
#pragma once
// The evidence each fix needs (docs/diagnosis.md, "Fixes earned by evidence"),
// as named predicates over a finding's facts, its window and the kernel view:
// the state table's fix rows (state_table.cpp) name one each. A state whose
// fixes are alternatives (which math the SMs do, which host wait) reads them
// through one classification, so that exactly one alternative holds.
#include <optional>

#include "diagnosis/state_table.hpp"

namespace gpulens::diagnosis {

// Tensor pipes at or above this (%) are busy: the job already runs its math on
// tensor cores, so mixed precision is not advice for it.
inline constexpr double kTensorBusyPct = 20.0;
// A non-tensor pipe at or above this (%) does work: math_idle_max's default, the
// line under which the classifier calls every pipe idle.
inline constexpr double kPipeAtWorkPct = 5.0;
// DRAM at or above this share of its practical peak is at that peak: the
// practical peak (90 % of theoretical) is where streaming kernels top out, and
// within a tenth of it what is left is counter jitter and access pattern, not a
// lever. There only fewer bytes help.
inline constexpr double kDramAtPeakShare = 0.9;
// Large pinned copies reach this share of the link's rate per direction:
// measured on an H100 (Gen5 x16, 63.0 GB/s), 55.1 GB/s host-to-device and 56.8
// GB/s device-to-host (calibration corpus, h2d_copies/pinned and
// holdout_copies/pinned_d2h); pageable ones 6.6 and 12.1 GB/s (0.10 and 0.19).
inline constexpr double kPinnedLinkShare = 0.87;
// Pinning advice only below this share of the pinned rate: about a factor of
// two from either kind (pageable copies reach 0.12-0.22 of the pinned rate,
// pinned ones 1.0), so a reading under it may be pageable, one over it is not.
inline constexpr double kPinningHelpsBelow = 0.5;
// Synchronisations per step at or above this are a habit of the loop (.item()
// after each op), not the one loss read of a step: the kernel view's `syncs`
// finding uses the same line.
inline constexpr double kSyncsPerStepMin = 3.0;
// The host blocked in synchronisations at least this share of the traced time
// (a view without step marks): a fifth of the time, the kernel view's line for
// a host- or launch-bound finding.
inline constexpr double kSyncShareMin = 0.2;
// Synchronisations per kernel launch at or above this (one every five launches
// or fewer) are a loop that waits after every op or two, however short each
// wait: a PyTorch op launches one to three kernels and a training step some
// hundreds with a handful of synchronisations (under 0.05), while a .item()
// after every op gives one per two to six launches (0.33 on the H200 corpus'
// item_every_op under --kernels, where each wait blocked the host only 6 % of
// the traced time and the share line alone read "few").
inline constexpr double kSyncsPerLaunchMin = 0.2;

// The tensor pipes by the type they compute in. GPM reads HMMA (fp16/bf16
// tensor math, and TF32: measured on an H100, the corpus' matmul_fp32/tf32 read
// HMMA 91.4 % with TENSOR_ACTIVE 91.4 %; fp8 is assumed to count as HMMA, not
// measured), IMMA (int8) and DFMA (fp64) apart, and TENSOR_ACTIVE for any. The
// one place that maps metrics to types: change it here when a measurement says
// otherwise.
struct TensorPipes {
  std::optional<double> floating;  // HMMA and DFMA; TENSOR_ACTIVE where they were not read
  std::optional<double> integer;   // IMMA
};
TensorPipes tensor_pipes(const WindowStats& window);

bool always(const FixInput&);

// Which math a compute-bound GPU's SMs do.
enum class ComputeMath {
  OnTensorCores,      // floating-type tensor pipes busy
  OnIntegerTensor,    // integer tensor pipes busy (an int8 GEMM)
  Integer,            // integer pipe at work, every float pipe idle
  WarpsWait,          // resident warps, no pipe at work: they wait, they do not compute
  Fp32OnCudaCores,    // the FP32 pipe works, tensor pipes mostly idle: precision advice
  OtherFloatOnCores,  // FP16 or FP64 pipes work, tensor pipes mostly idle
  NotMeasured,        // the pipes were not read (no GPM)
};
ComputeMath compute_math(const FixInput& in);
template <ComputeMath K>
bool compute_math_is(const FixInput& in) {
  return compute_math(in) == K;
}

// What limits a memory-bound GPU.
enum class MemoryLimit {
  Stall,           // warps wait on scattered access (StateFacts::memory_stall)
  ControllerOnly,  // the classic controller's busy time; DRAM bandwidth not measured
  Dram,            // DRAM bandwidth, measured
};
MemoryLimit memory_limit(const FixInput& in);
template <MemoryLimit K>
bool memory_limit_is(const FixInput& in) {
  return memory_limit(in) == K;
}

// How wide the data of a memory-bound GPU is, as far as the evidence says.
enum class DataWidth {
  Half,     // FP16 pipe or floating tensor pipes at work, or the kernels' types: 16 bits or less
  Fp32,     // the kernels move fp32, or the FP32 pipe works with the half-width pipes idle
  Unknown,  // nothing says
};
DataWidth data_width(const FixInput& in);

// What the host does while the GPU waits on it.
enum class HostWait {
  StagedCopies,       // a busy process stages copies (copies_host_limited)
  WaitsOnProcess,     // no kernel while a process of the GPU works on the CPU
  Synchronises,       // at a full core, and the kernel view counts the synchronisations
  DoesTheWork,        // at a full core, and the kernel view counts few synchronisations
  ProcessAtFullCore,  // at a full core, no kernel view: either of the two above
  ProcessWaits,       // the process mostly waits: on input, most often
  NoProcessCpu,       // no per-process CPU figures
};
HostWait host_wait(const FixInput& in);
template <HostWait K>
bool host_wait_is(const FixInput& in) {
  return host_wait(in) == K;
}
// Copy traffic beside a host wait that is not itself staged copies.
bool host_wait_with_copies(const FixInput& in);

// The kernel view counts synchronisations: many (a habit of the loop), or few.
std::optional<bool> kernel_view_sees_syncs(const FixInput& in);

// Copies at the rate pinned copies reach on this link (kPinnedLinkShare x
// kPinningHelpsBelow of the link, or more): pinning is done.
bool copies_at_link_rate(const FixInput& in);
bool copies_below_link_rate(const FixInput& in);
// The kernel view saw host-device copies, and none from pageable memory.
bool copies_known_pinned(const FixInput& in);
// The kernel view saw copies from pageable memory.
bool copies_known_pageable(const FixInput& in);
// Copies staged by a busy process (StateFacts::copies_host_limited), unless the
// kernel view says they came from pinned memory.
bool copies_staged_pageable(const FixInput& in);
// Pinned copies, by the kernel view, below the link's rate: small ones.
bool small_pinned_copies(const FixInput& in);
// Below the pinned rate, not staged by a busy process, and not known pinned.
bool pinning_may_help(const FixInput& in);

// Which loop feeds a launch-bound GPU's tiny kernels.
enum class LaunchLoop {
  Synchronises,      // at a full core, and the kernel view counts the synchronisations
  OnlyLaunches,      // at a full core, and the kernel view counts few
  EitherAtFullCore,  // at a full core, no kernel view
  NotAtFullCore,     // no process at a full core (or no per-process CPU)
};
LaunchLoop launch_loop(const FixInput& in);
template <LaunchLoop K>
bool launch_loop_is(const FixInput& in) {
  return launch_loop(in) == K;
}

bool in_job(const FixInput& in);
bool not_in_job(const FixInput& in);
bool peer_slow_rank(const FixInput& in);
bool peer_busier(const FixInput& in);
bool gpm_missing(const FixInput& in);

}  // namespace gpulens::diagnosis

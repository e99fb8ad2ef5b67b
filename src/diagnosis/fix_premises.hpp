// SPDX-License-Identifier: Apache-2.0
#pragma once
// The evidence each fix needs (docs/diagnosis.md, "Fixes earned by evidence"),
// as named predicates over a finding's facts and its window: the state table's
// fix rows (state_table.cpp) name one each. A state whose fixes are
// alternatives (which math the SMs do, which host wait) reads them through one
// classification, so that exactly one alternative holds.
#include "diagnosis/state_table.hpp"

namespace gpulens::diagnosis {

// Tensor pipes at or above this (%) are busy: the job already runs its math on
// tensor cores (bf16/fp16/TF32), so mixed precision is not advice for it.
inline constexpr double kTensorBusyPct = 20.0;

bool always(const FixInput&);

// Which math a compute-bound GPU's SMs do.
enum class ComputeMath {
  OnTensorCores,     // tensor pipes busy: precision advice would tell the job what it does
  Integer,           // integer pipe at work, every float pipe idle
  WarpsWait,         // resident warps, no pipe at work: they wait, they do not compute
  FloatOnCudaCores,  // FP pipes at work, tensor pipes mostly idle
  NotMeasured,       // the pipes were not read (no GPM)
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

// What the host does while the GPU waits on it.
enum class HostWait {
  StagedCopies,       // a busy process stages copies (copies_host_limited)
  WaitsOnProcess,     // no kernel while a process of the GPU works on the CPU
  ProcessAtFullCore,  // synchronises every step or does the work itself
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

bool copies_host_limited(const FixInput& in);
bool copies_not_host_limited(const FixInput& in);
bool process_at_full_core(const FixInput& in);
bool in_job(const FixInput& in);
bool not_in_job(const FixInput& in);
bool peer_slow_rank(const FixInput& in);
bool peer_busier(const FixInput& in);
bool gpm_missing(const FixInput& in);

}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/fix_premises.hpp"

namespace gpulens::diagnosis {

bool always(const FixInput&) {
  return true;
}

ComputeMath compute_math(const FixInput& in) {
  const StateFacts& f = in.facts();
  if (f.tensor_active && *f.tensor_active >= kTensorBusyPct) return ComputeMath::OnTensorCores;
  if (f.int_work && f.math_idle) return ComputeMath::Integer;
  if (f.math_idle) return ComputeMath::WarpsWait;
  if (f.tensor_active) return ComputeMath::FloatOnCudaCores;
  return ComputeMath::NotMeasured;
}

MemoryLimit memory_limit(const FixInput& in) {
  const StateFacts& f = in.facts();
  if (f.memory_stall) return MemoryLimit::Stall;
  if (!f.dram_active) return MemoryLimit::ControllerOnly;
  return MemoryLimit::Dram;
}

HostWait host_wait(const FixInput& in) {
  const StateFacts& f = in.facts();
  if (f.copies_host_limited) return HostWait::StagedCopies;
  if (f.waits_on_process) return HostWait::WaitsOnProcess;
  if (f.process_at_full_core) return HostWait::ProcessAtFullCore;
  if (f.process_cpu_pct) return HostWait::ProcessWaits;
  return HostWait::NoProcessCpu;
}

bool host_wait_with_copies(const FixInput& in) {
  const HostWait w = host_wait(in);
  return in.facts().copying && w != HostWait::StagedCopies && w != HostWait::WaitsOnProcess;
}

bool copies_host_limited(const FixInput& in) {
  return in.facts().copies_host_limited;
}
bool copies_not_host_limited(const FixInput& in) {
  return !in.facts().copies_host_limited;
}
bool process_at_full_core(const FixInput& in) {
  return in.facts().process_at_full_core;
}
bool in_job(const FixInput& in) {
  return in.ctx.in_job;
}
bool not_in_job(const FixInput& in) {
  return !in.ctx.in_job;
}
bool peer_slow_rank(const FixInput& in) {
  return in.facts().peer_slow_rank;
}
bool peer_busier(const FixInput& in) {
  return !in.facts().peer_slow_rank;
}
bool gpm_missing(const FixInput& in) {
  return !in.hw.gpm_missing_reason.empty();
}

}  // namespace gpulens::diagnosis

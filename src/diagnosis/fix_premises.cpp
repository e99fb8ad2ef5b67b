// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/fix_premises.hpp"

#include <algorithm>

namespace gpulens::diagnosis {
namespace {

bool at_least(std::optional<double> v, double line) {
  return v && *v >= line;
}

std::optional<double> max_of(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

bool narrow_type(const std::string& dtype) {
  return dtype == "bf16" || dtype == "fp16" || dtype == "fp8" || dtype == "int8";
}

}  // namespace

TensorPipes tensor_pipes(const WindowStats& w) {
  TensorPipes p;
  p.integer = w.get(Metric::ImmaActive);
  p.floating = max_of(w.get(Metric::HmmaActive), w.get(Metric::DfmaActive));
  // A recording without the breakdown: any tensor work counts as floating, the
  // rule before the breakdown was read.
  if (!p.floating && !p.integer) p.floating = w.get(Metric::TensorActive);
  return p;
}

bool always(const FixInput&) {
  return true;
}

ComputeMath compute_math(const FixInput& in) {
  const StateFacts& f = in.facts();
  const TensorPipes tp = tensor_pipes(in.window);
  const auto fp32 = in.window.get(Metric::Fp32Active);
  const auto other = max_of(in.window.get(Metric::Fp16Active), in.window.get(Metric::Fp64Active));
  const double cores = max_of(fp32, other).value_or(0);
  // The tensor pipes do the math when they are busy, or at work and busier
  // than every FP pipe: a slow int8 GEMM keeps IMMA at 13 % with every FP pipe
  // at 0 (the H200 corpus' gemm_int8), and nothing on CUDA cores is left to
  // move to tensor cores. TENSOR_ACTIVE counts where the breakdown names no pipe.
  const double tensor =
      std::max({tp.floating.value_or(0), tp.integer.value_or(0), f.tensor_active.value_or(0)});
  if (tensor >= kTensorBusyPct || (tensor >= kPipeAtWorkPct && tensor >= cores)) {
    return tp.integer.value_or(0) > tp.floating.value_or(0) ? ComputeMath::OnIntegerTensor
                                                            : ComputeMath::OnTensorCores;
  }
  if (f.int_work && f.math_idle) return ComputeMath::Integer;
  if (f.math_idle) return ComputeMath::WarpsWait;
  if (!f.tensor_active) return ComputeMath::NotMeasured;
  if (at_least(fp32, kPipeAtWorkPct) && *fp32 >= other.value_or(0)) {
    return ComputeMath::Fp32OnCudaCores;
  }
  return ComputeMath::OtherFloatOnCores;
}

MemoryLimit memory_limit(const FixInput& in) {
  const StateFacts& f = in.facts();
  if (f.memory_stall) return MemoryLimit::Stall;
  if (!f.dram_active) return MemoryLimit::ControllerOnly;
  return MemoryLimit::Dram;
}

DataWidth data_width(const FixInput& in) {
  // The kernel view names the types of the kernels that take the time.
  if (in.ctx.kernels && !in.ctx.kernels->top.empty()) {
    bool narrow = false, wide = false;
    for (const auto& k : in.ctx.kernels->top) {
      if (k.dtype == "fp32" || k.dtype == "fp64" || k.dtype == "tf32") wide = true;
      if (narrow_type(k.dtype)) narrow = true;
    }
    if (wide) return DataWidth::Fp32;
    if (narrow) return DataWidth::Half;
  }
  // The pipes: half-width math on the FP16 pipe, or tensor math (its operands
  // are 16 bits or less, but for TF32, which reads fp32: then the FP32 side
  // decides), says the data is already narrow.
  const TensorPipes tp = tensor_pipes(in.window);
  if (at_least(in.window.get(Metric::Fp16Active), kPipeAtWorkPct) ||
      at_least(tp.floating, kTensorBusyPct)) {
    return DataWidth::Half;
  }
  if (at_least(in.window.get(Metric::Fp32Active), kPipeAtWorkPct)) return DataWidth::Fp32;
  return DataWidth::Unknown;
}

std::optional<bool> kernel_view_sees_syncs(const FixInput& in) {
  if (!in.ctx.kernels) return std::nullopt;
  const KernelEvidence& k = *in.ctx.kernels;
  if (k.syncs_per_step && *k.syncs_per_step >= kSyncsPerStepMin) return true;
  if (k.syncs_per_launch && *k.syncs_per_launch >= kSyncsPerLaunchMin) return true;
  if (k.syncs_per_step) return false;
  if (k.sync_share) return *k.sync_share >= kSyncShareMin;
  return std::nullopt;
}

HostWait host_wait(const FixInput& in) {
  const StateFacts& f = in.facts();
  if (copies_staged_pageable(in)) return HostWait::StagedCopies;
  if (f.waits_on_process) return HostWait::WaitsOnProcess;
  if (f.process_at_full_core) {
    if (const auto syncs = kernel_view_sees_syncs(in)) {
      return *syncs ? HostWait::Synchronises : HostWait::DoesTheWork;
    }
    return HostWait::ProcessAtFullCore;
  }
  if (f.process_cpu_pct) return HostWait::ProcessWaits;
  return HostWait::NoProcessCpu;
}

bool host_wait_with_copies(const FixInput& in) {
  const HostWait w = host_wait(in);
  return in.facts().copying && w != HostWait::StagedCopies && w != HostWait::WaitsOnProcess;
}

LaunchLoop launch_loop(const FixInput& in) {
  if (!in.facts().process_at_full_core) return LaunchLoop::NotAtFullCore;
  if (const auto syncs = kernel_view_sees_syncs(in)) {
    return *syncs ? LaunchLoop::Synchronises : LaunchLoop::OnlyLaunches;
  }
  return LaunchLoop::EitherAtFullCore;
}

bool copies_at_link_rate(const FixInput& in) {
  const auto share = in.facts().pcie_share;
  return share && *share >= kPinnedLinkShare * kPinningHelpsBelow;
}
bool copies_below_link_rate(const FixInput& in) {
  return !copies_at_link_rate(in);
}

bool copies_known_pinned(const FixInput& in) {
  const auto& k = in.ctx.kernels;
  return k && k->pinned_copies && !k->pageable_copies;
}
bool copies_known_pageable(const FixInput& in) {
  return in.ctx.kernels && in.ctx.kernels->pageable_copies;
}

bool copies_staged_pageable(const FixInput& in) {
  return in.facts().copies_host_limited && copies_below_link_rate(in) && !copies_known_pinned(in);
}

bool small_pinned_copies(const FixInput& in) {
  return copies_known_pinned(in) && copies_below_link_rate(in);
}

bool pinning_may_help(const FixInput& in) {
  return copies_below_link_rate(in) && !copies_staged_pageable(in) && !copies_known_pinned(in);
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

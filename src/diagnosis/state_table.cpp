// SPDX-License-Identifier: Apache-2.0
// The rows of the state table: one per GpuState, in the enum's order. A fix
// row is {the evidence it needs, its text}; a state's fixes are its rows whose
// premises hold, in this order (fix_premises.hpp names the evidence,
// fix_texts.hpp builds the words).
#include "diagnosis/state_table.hpp"

#include <array>

#include "diagnosis/fix_premises.hpp"
#include "diagnosis/fix_texts.hpp"

namespace gpulens::diagnosis {
namespace {

namespace t = fix_text;

constexpr FixRow kIdle[] = {
    {always, t::release_idle_gpu},
};

constexpr FixRow kIdleHoldingMemory[] = {
    {in_job, t::job_holds_memory},
    {in_job, t::job_waits_elsewhere},
    {not_in_job, t::process_holds_memory},
    {not_in_job, t::free_cached_memory},
};

constexpr FixRow kComputeBound[] = {
    {compute_math_is<ComputeMath::OnTensorCores>, t::math_on_tensor_cores},
    {compute_math_is<ComputeMath::OnIntegerTensor>, t::math_on_integer_tensor},
    {compute_math_is<ComputeMath::Integer>, t::integer_work},
    {compute_math_is<ComputeMath::WarpsWait>, t::warps_wait},
    {compute_math_is<ComputeMath::Fp32OnCudaCores>, t::use_tensor_cores},
    {compute_math_is<ComputeMath::Fp32OnCudaCores>, t::then_fuse},
    {compute_math_is<ComputeMath::OtherFloatOnCores>, t::other_float_on_cores},
    {compute_math_is<ComputeMath::NotMeasured>, t::pipes_not_measured},
};

constexpr FixRow kMemoryBound[] = {
    {memory_limit_is<MemoryLimit::Stall>, t::scattered_access},
    {memory_limit_is<MemoryLimit::ControllerOnly>, t::controller_busy},
    {memory_limit_is<MemoryLimit::Dram>, t::move_fewer_bytes},
    {memory_limit_is<MemoryLimit::Dram>, t::larger_batches_for_weights},
};

constexpr FixRow kInterconnectBound[] = {
    {always, t::overlap_communication},
    {always, t::send_fewer_bytes},
    {always, t::check_topology},
};

constexpr FixRow kPcieBound[] = {
    {copies_staged_pageable, t::staged_copies},    {copies_at_link_rate, t::copies_at_link_rate},
    {small_pinned_copies, t::small_pinned_copies}, {copies_below_link_rate, t::keep_data_on_gpu},
    {pinning_may_help, t::use_pinned_memory},      {copies_below_link_rate, t::batch_transfers},
};

constexpr FixRow kHostBound[] = {
    {host_wait_is<HostWait::StagedCopies>, t::staged_copies},
    {host_wait_is<HostWait::StagedCopies>, t::keep_data_on_gpu},
    {host_wait_is<HostWait::WaitsOnProcess>, t::gpu_waits_for_process},
    {host_wait_is<HostWait::Synchronises>, t::synchronises_every_step},
    {host_wait_is<HostWait::DoesTheWork>, t::does_the_work},
    {host_wait_is<HostWait::ProcessAtFullCore>, t::process_at_full_core},
    {host_wait_is<HostWait::ProcessAtFullCore>, t::sync_or_preprocess},
    {host_wait_is<HostWait::ProcessWaits>, t::process_waits_on_input},
    {host_wait_is<HostWait::NoProcessCpu>, t::host_wait_unknown},
    {host_wait_with_copies, t::pin_and_prefetch},
};

constexpr FixRow kLaunchBound[] = {
    {launch_loop_is<LaunchLoop::Synchronises>, t::sync_after_every_op},
    {launch_loop_is<LaunchLoop::OnlyLaunches>, t::launch_overhead},
    {launch_loop_is<LaunchLoop::EitherAtFullCore>, t::launch_or_sync},
    {always, t::more_work_per_launch},
    {always, t::cut_launch_overhead},
    {always, t::fuse_elementwise},
};

constexpr FixRow kSmUnderused[] = {
    {always, t::launch_more_blocks},
    {always, t::share_or_right_size},
};

constexpr FixRow kWaitingOnPeer[] = {
    {peer_slow_rank, t::slower_rank},
    {peer_busier, t::balance_ranks},
    {peer_busier, t::rank0_extras},
};

constexpr FixRow kBusy[] = {
    {always, t::measure_busy_kernels},
};

constexpr FixRow kUnknown[] = {
    {gpm_missing, t::measure_sm_activity},
};

// Colours: twelve hues far enough apart to tell on a chart band; the
// busy-but-held-back states avoid green, idle ones are greys. The web
// dashboard (web/src/format.js) repeats the hex values; a unit test holds them
// equal. Fix weights: compute_bound is the healthy case, its fixes (fusing,
// less work per step) the next step, not a repair; busy's GPU works and nothing
// measured says it works badly, its fix is what would tell; unknown says
// nothing at all.
constexpr std::array<StateRow, kGpuStateCount> kRows{{
    {GpuState::Unknown,
     "unknown",
     "the metrics needed to tell were not measured",
     "not known",
     {"#e6e8ec", 254, Ansi8::White, true},
     0.0,
     summary::unknown,
     kUnknown},
    {GpuState::Idle,
     "idle",
     "no kernels ran",
     "idle",
     {"#c3c9d2", 251, Ansi8::White, false},
     1.0,
     summary::idle,
     kIdle},
    {GpuState::IdleHoldingMemory,
     "idle_holding_memory",
     "no kernels ran, but a process holds a large share of device memory",
     "idle while holding memory",
     {"#8c96a3", 246, Ansi8::Blue, false},
     1.0,
     summary::idle_holding_memory,
     kIdleHoldingMemory},
    {GpuState::ComputeBound,
     "compute_bound",
     "SMs are busy (tensor or CUDA cores): the healthy case",
     "compute-bound",
     {"#22a06b", 35, Ansi8::Green, true},
     0.25,
     summary::compute_bound,
     kComputeBound},
    {GpuState::MemoryBound,
     "memory_bound",
     "DRAM bandwidth is the limit",
     "memory-bound",
     {"#e09b2d", 172, Ansi8::Yellow, true},
     1.0,
     summary::memory_bound,
     kMemoryBound},
    {GpuState::InterconnectBound,
     "interconnect_bound",
     "NVLink traffic dominates while SMs are mostly idle (collectives)",
     "interconnect-bound",
     {"#8a63d2", 98, Ansi8::Magenta, true},
     1.0,
     summary::interconnect_bound,
     kInterconnectBound},
    {GpuState::PcieBound,
     "pcie_bound",
     "host-device copies dominate while SMs are idle",
     "PCIe-bound",
     {"#d0567f", 168, Ansi8::Magenta, false},
     1.0,
     summary::pcie_bound,
     kPcieBound},
    {GpuState::HostBound,
     "host_bound",
     "the GPU waits for the host most of the time; kernels are large when they run",
     "host-bound",
     {"#e5533c", 167, Ansi8::Red, true},
     1.0,
     summary::host_bound,
     kHostBound},
    {GpuState::LaunchBound,
     "launch_bound",
     "kernels are tiny: kernel time is spent with almost no SM working",
     "launch-bound",
     {"#c7a82a", 178, Ansi8::Yellow, false},
     1.0,
     summary::launch_bound,
     kLaunchBound},
    {GpuState::SmUnderused,
     "sm_underused",
     "a kernel runs nearly all the time but occupies a small share of the SMs",
     "few SMs busy",
     {"#3a86d4", 68, Ansi8::Blue, true},
     1.0,
     summary::sm_underused,
     kSmUnderused},
    {GpuState::WaitingOnPeer,
     "waiting_on_peer",
     "a kernel is running but the SMs are idle while other GPUs of the same job are busy",
     "waiting on another GPU",
     {"#9a7350", 137, Ansi8::Cyan, true},
     1.0,
     summary::waiting_on_peer,
     kWaitingOnPeer},
    // A teal, not green: the GPU works, but nothing says it works well.
    {GpuState::Busy,
     "busy",
     "kernels run most of the time; how well they use the SMs was not measured (no GPM)",
     "busy with kernels",
     {"#2a9d9d", 30, Ansi8::Cyan, false},
     0.25,
     summary::busy,
     kBusy},
}};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    if (state_index(kRows[i].state) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "kRows must list states in enum order");

}  // namespace

const StateRow& state_row(GpuState state) {
  const auto i = state_index(state);
  return i < kRows.size() ? kRows[i] : kRows[0];
}

std::span<const StateRow> state_rows() {
  return kRows;
}

}  // namespace gpulens::diagnosis

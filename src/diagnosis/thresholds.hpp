// SPDX-License-Identifier: Apache-2.0
#pragma once
// The numbers the state classifier holds window means against. Each default is
// argued from what the counters measure, not fitted to the reference recordings;
// docs/diagnosis.md gives the reasoning and the config keys.
#include <string_view>
#include <vector>

namespace gpulens::diagnosis {

struct Thresholds {
  // Below this kernel time (%) no kernel ran: 10 ms a second. Utilization is
  // an integer percent and SM activity reads ~0.001 % at rest, so 1 % is the
  // counters' floor; a starved job running 3 % of the time is not idle. Kernel
  // time is utilization, or SM activity where that reads higher (the counters
  // average over different intervals; SMs cannot be active without a kernel).
  double idle_util_max = 1.0;
  // Share of device memory a process must hold for an idle GPU to count as held.
  double idle_memory_share_min = 0.25;
  // sm_active / gpu_util at or above which the SMs count as well used while
  // kernels run. DCGM calls < 0.5 ineffective and >= 0.8 effective; a one- or
  // two-wave tail lands between 0.5 and 0.67, so 0.6 keeps "half the SMs" on
  // the underused side with margin and a full multi-wave kernel on the busy side.
  double busy_ratio_min = 0.6;
  // sm_active / gpu_util below which the SMs are nearly idle during kernel time
  // (Packet.ai's "efficiency is low" line).
  double launch_ratio_max = 0.3;
  // launch_bound needs kernels in at least this share of the window's samples:
  // tiny kernels launched back to back show in nearly every 100 ms sample, while
  // a few blips on an idle GPU (a health check, a timer) are idle, not launch-bound.
  double launch_kernel_share_min = 0.5;
  // Utilization (%) below which the GPU waits a substantial share (>= 30 %) of
  // the time: a host-side bottleneck when kernels are large.
  double host_util_max = 70.0;
  // dram_active as a share of the practical DRAM peak at which DRAM is the limit.
  double memory_bound_share_min = 0.75;
  // PCIe traffic as a share of the link's bandwidth: saturated, or copy time
  // while no SM works. Utilization counts a copy engine at work as busy, so
  // PCIe traffic with idle SMs is copy time, not kernel time, at any link share:
  // pageable copies staged by one CPU core reach only 5-15 % of a Gen5 link, 64 KiB
  // copies less. 2 % (1.3 GB/s on Gen5 x16) is far above the few MiB/s of
  // driver chatter on an idle GPU.
  double pcie_saturated_share_min = 0.6;
  double pcie_copy_share_min = 0.02;
  // Host-limited copies: copy traffic below the saturated line while a process
  // of the GPU uses at least this much CPU (%, 100 = one core): the driver
  // stages pageable memory through a pinned buffer with one core memcpy-ing.
  double host_copy_cpu_pct_min = 90.0;
  // NVLink traffic as a share of the links' bandwidth that counts as heavy
  // (NCCL collectives reach 70-80 % on large messages, less on small ones).
  double nvlink_busy_share_min = 0.3;
  // SM activity gap (points) between GPUs of one job that marks one as waiting.
  double peer_gap_points = 40.0;
  // A slower rank: GPUs of one job doing the same work (SM activity within this
  // many points) while one has a kernel resident peer_gap_points more of the
  // time than the other. The extra resident time does no work: it is a
  // collective waiting for the rank whose GPU idles (held up on its host).
  double peer_same_work_points = 10.0;
  // The same work judged where it is done: the busiest math pipe (tensor, FP16,
  // FP32, FP64) of the two GPUs, the smaller over the larger, at least this. A
  // rank waiting in a collective spins NCCL's channels (SM activity) but does no
  // math, so SM activity overstates its work; the math pipes do not. Ranks of one
  // synchronous program run the same steps at the same rate, so their math shares
  // agree to within sampling noise and the extra work of one rank (the loss, a
  // metric): 0.75 leaves a quarter for that. With no math pipe measured, or none
  // at work on either GPU, SM activity decides (peer_same_work_points).
  double peer_same_math_ratio_min = 0.75;
  // A math pipe (tensor, FP16, FP32, FP64) below this activity (%) does no math
  // worth the name; all of them below it while the SMs are resident means the
  // warps wait (on memory, a flag, a lock), and tensor-core advice has no premise.
  double math_idle_max = 5.0;
  // Integer pipe activity over SM activity at or above which the SMs do integer
  // work: a hash or index kernel issues an integer op every few cycles (well over
  // half of an active SM's integer issue), a spin-wait one per load latency of a
  // few hundred cycles (a few percent). 0.2 is a factor of about four from both.
  double int_work_share_min = 0.2;
  // DRAM over its practical peak at which SMs resident with every math pipe idle
  // are memory-bound (scattered or latency-bound access): a random gather keeps
  // DRAM well short of its streaming peak, but nothing else is busy. A hung,
  // sleeping or spinning kernel moves no DRAM at all (0.00 % on all seven hang
  // recordings of the corpus); a warp that waits on memory moves at least its
  // sectors: one warp per SM chasing pointers on an H100 moves 132 x 32 sectors
  // of 32 B per ~0.6-1 us, about 0.05-0.08 of the practical peak. The line sits
  // at the bottom of that (0.3 until 2026-11-28, which a 4 GiB embedding gather
  // at 0.28 missed).
  double memory_stall_dram_share_min = 0.05;
  // A process at or above this CPU (%, 100 = one core) while its GPU runs no
  // kernel: the GPU waits for that process (tokenizing, compiling, preprocessing).
  // Per-process CPU is counted in 10-ms ticks, so a process that never leaves
  // the CPU reads 89.95, 100 or 110 % by turns: 85 is under its lowest reading
  // (90 until 2026-11-29 sat on it), far above a process that waits (< 30 %).
  double host_busy_cpu_pct_min = 85.0;
  // Kernel time (%) below which a process at a full core is doing CPU work, not
  // waiting on synchronisations. A loop that synchronises after each step waits
  // exactly as long as the GPU works, and a round trip costs the host ~10-20 us,
  // so even microsecond kernels keep kernel time well above this (28 % in the
  // corpus's .item()-after-every-op loop); 5 % means the host spends at least 19
  // times the GPU's time between launches: compiling, tokenizing, preprocessing.
  double host_work_util_max = 5.0;
  // Cores busy on the host beyond the GPU's own processes at which a GPU that
  // runs short steps now and then, while its process waits, waits on them (a
  // job's DataLoader workers run in processes of their own, without a CUDA
  // context, so only the host's total shows them). Two cores is two workers at
  // full speed, well above the sampler, the shell and the kernel's own threads
  // (~0.1 core on the recordings' hosts).
  double other_cpu_cores_min = 2.0;
  // Share of the window's samples with a kernel resident for a nearly idle GPU
  // to count as running steps (not left idle): a training step every few hundred
  // ms shows in one 100 ms sample of ten or more; a GPU left open shows none.
  double stepping_kernel_share_min = 0.05;
  // Device-to-host traffic (MiB/s) that is sustained copying, not driver
  // chatter (a few MiB/s idle, under 60 MiB/s beside the recordings' jobs): with
  // SMs idle and a process at a full core it is copy time at any link share.
  // Host-to-device traffic is not judged by it: launching kernels makes the GPU
  // fetch command buffers from host memory, ~460 MiB/s in a launch-bound loop.
  double copy_traffic_mibs_min = 256.0;
  // Share of a window's samples with a power/thermal clock reason for `throttled`.
  double throttle_share_min = 0.5;
  // SM clock below this share of the maximum confirms a clock reason as a throttle.
  double throttle_clock_share_max = 0.99;
};

// Name, pointer and one-line reason for each threshold: the config loader and
// the documentation both read this table.
struct ThresholdSpec {
  std::string_view key;
  double Thresholds::*field;
  double min;
  double max;
  std::string_view doc;
};
const std::vector<ThresholdSpec>& threshold_specs();

}  // namespace gpulens::diagnosis

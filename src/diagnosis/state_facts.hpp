// SPDX-License-Identifier: Apache-2.0
#pragma once
// What one GPU's window measured, as the classifier reads it: the counters, their
// ratios to the hardware's limits, and the host's share. Pure: no clocks, no I/O.
#include <optional>
#include <vector>

#include "diagnosis/hardware.hpp"
#include "diagnosis/thresholds.hpp"
#include "diagnosis/window.hpp"

namespace gpulens::diagnosis {

// The numbers a verdict rests on, typed, for sentences and fixes.
struct StateFacts {
  std::optional<double> gpu_util;
  std::optional<double> sm_active;
  std::optional<double> sm_ratio;  // sm_active / gpu_util, 0..1
  std::optional<double> tensor_active;
  // The busiest of the tensor, FP16, FP32 and FP64 pipes; absent when none was read.
  std::optional<double> float_pipes;
  std::optional<double> int_active;  // integer pipe (GPM), absent on older recordings
  // Integer pipe over SM activity: at or above int_work_share_min the SMs do integer work.
  std::optional<double> int_share;
  std::optional<double> dram_active;
  std::optional<double> dram_share;  // of the practical peak
  std::optional<double> mem_util;    // classic memory-controller busy %
  std::optional<double> pcie_mibs;   // the busier direction
  std::optional<double> pcie_share;  // of the link
  bool pcie_host_to_device = true;   // rx (host to device) is the busier direction
  std::optional<double> nvlink_mibs;
  std::optional<double> nvlink_share;
  std::optional<double> busy_sms;  // sm_active x SM count
  std::optional<int> peer_gpu;     // the busiest other GPU of the job (or the slower one)
  std::optional<double> peer_sm_active;
  std::optional<double> peer_util;
  // The peer is a slower rank: it does the same work with its GPU idle much of
  // the time, so this GPU's extra resident time is a collective waiting for it.
  bool peer_slow_rank = false;
  // The busiest process of this GPU, CPU (%, 100 = one core), and who it is.
  std::optional<double> process_cpu_pct;
  bool process_at_full_core = false;  // process_cpu_pct >= host_busy_cpu_pct_min
  // SMs resident, every math pipe idle, DRAM busy: warps wait on memory access.
  bool memory_stall = false;
  // No kernel runs while a process of the GPU keeps a CPU core busy.
  bool waits_on_process = false;
  // Cores busy on the host beyond this GPU's processes (host_cpu_pct x cores -
  // the processes' CPU); absent without the host's CPU, its core count or the
  // processes' CPU.
  std::optional<double> other_cpu_cores;
  // The GPU runs a short step now and then while its process waits and other
  // processes keep cores busy: it waits on them (DataLoader workers, most often).
  bool waits_on_other_processes = false;
  // Every tensor/FP pipe under math_idle_max (false when they were not read).
  bool math_idle = false;
  // The integer pipe works (int_share >= int_work_share_min).
  bool int_work = false;
  // Sustained copy traffic: over pcie_copy_share_min of the link or copy_traffic_mibs_min.
  bool copying = false;
  std::optional<double> mem_held_mib;
  std::optional<double> mem_held_share;
  std::optional<double> kernel_sample_share;  // share of samples with a kernel resident
  // Copy traffic on PCIe at or above the saturated line (pcie_saturated_share_min).
  bool pcie_saturated = false;
  // Copy traffic below the saturated line while a process of the GPU keeps a CPU
  // core busy (host_copy_cpu_pct_min): copies staged by the host, the signature
  // of pageable memory. The fix is pinned memory, whatever the state.
  bool copies_host_limited = false;
};

// Another GPU of the same job, as its window saw it.
struct PeerActivity {
  int gpu = 0;
  std::optional<double> sm_active;
  std::optional<double> gpu_util;
  std::optional<double> math_active;  // busiest_math_pipe of its window
};

// The busiest of the tensor, FP16, FP32 and FP64 pipes (GPM, %); nullopt when none
// was measured.
std::optional<double> busiest_math_pipe(const WindowStats& window);

// The facts of one window, with the busiest peer of its job.
StateFacts measure_state_facts(const WindowStats& window, const HardwareLimits& hw,
                               const Thresholds& th, const std::vector<PeerActivity>& peers);

}  // namespace gpulens::diagnosis

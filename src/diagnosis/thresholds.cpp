// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/thresholds.hpp"

namespace gpulens::diagnosis {

const std::vector<ThresholdSpec>& threshold_specs() {
  static const std::vector<ThresholdSpec> specs{
      {"idle_util_max", &Thresholds::idle_util_max, 0, 100,
       "utilization (%) below which no kernel ran"},
      {"idle_memory_share_min", &Thresholds::idle_memory_share_min, 0, 1,
       "share of device memory held for idle_holding_memory"},
      {"busy_ratio_min", &Thresholds::busy_ratio_min, 0, 1,
       "sm_active/gpu_util at which SMs count as well used"},
      {"launch_ratio_max", &Thresholds::launch_ratio_max, 0, 1,
       "sm_active/gpu_util below which SMs are nearly idle in kernel time"},
      {"launch_kernel_share_min", &Thresholds::launch_kernel_share_min, 0, 1,
       "share of the window's samples with a kernel needed for launch_bound"},
      {"host_util_max", &Thresholds::host_util_max, 0, 100,
       "utilization (%) below which the GPU waits a substantial share of the time"},
      {"memory_bound_share_min", &Thresholds::memory_bound_share_min, 0, 1,
       "dram_active over the practical DRAM peak for memory_bound"},
      {"pcie_saturated_share_min", &Thresholds::pcie_saturated_share_min, 0, 1,
       "PCIe traffic over link bandwidth that saturates the link"},
      {"pcie_copy_share_min", &Thresholds::pcie_copy_share_min, 0, 1,
       "PCIe traffic over link bandwidth that is copy time when no SM works"},
      {"host_copy_cpu_pct_min", &Thresholds::host_copy_cpu_pct_min, 0, 10000,
       "CPU (%, 100 = one core) of a GPU process that marks copies as host-limited"},
      {"nvlink_busy_share_min", &Thresholds::nvlink_busy_share_min, 0, 1,
       "NVLink traffic over link bandwidth that counts as heavy"},
      {"peer_gap_points", &Thresholds::peer_gap_points, 0, 100,
       "SM activity gap (points) between GPUs of one job for waiting_on_peer"},
      {"peer_same_work_points", &Thresholds::peer_same_work_points, 0, 100,
       "SM activity within which two GPUs of one job do the same work (a slower rank), "
       "when their math pipes cannot tell"},
      {"peer_same_math_ratio_min", &Thresholds::peer_same_math_ratio_min, 0, 1,
       "busiest math pipe of two GPUs of one job, smaller over larger, for the same work"},
      {"math_idle_max", &Thresholds::math_idle_max, 0, 100,
       "activity (%) below which a tensor/FP pipe does no math"},
      {"int_work_share_min", &Thresholds::int_work_share_min, 0, 1,
       "integer pipe over SM activity at which the SMs do integer work"},
      {"memory_stall_dram_share_min", &Thresholds::memory_stall_dram_share_min, 0, 1,
       "DRAM over its practical peak for memory_bound when no math pipe works"},
      {"host_busy_cpu_pct_min", &Thresholds::host_busy_cpu_pct_min, 0, 10000,
       "CPU (%, 100 = one core) of a GPU process that its idle GPU waits for"},
      {"host_work_util_max", &Thresholds::host_work_util_max, 0, 100,
       "kernel time (%) below which a process at a full core does CPU work, not syncs"},
      {"other_cpu_cores_min", &Thresholds::other_cpu_cores_min, 0, 10000,
       "cores busy beyond the GPU's processes that a nearly idle, stepping GPU waits on"},
      {"stepping_kernel_share_min", &Thresholds::stepping_kernel_share_min, 0, 1,
       "share of samples with a kernel for a nearly idle GPU to count as running steps"},
      {"copy_traffic_mibs_min", &Thresholds::copy_traffic_mibs_min, 0, 1e9,
       "device-to-host PCIe traffic (MiB/s) that counts as sustained copying"},
      {"throttle_share_min", &Thresholds::throttle_share_min, 0, 1,
       "share of samples with a power/thermal clock reason for throttled"},
      {"throttle_clock_share_max", &Thresholds::throttle_clock_share_max, 0, 1,
       "SM clock over its maximum below which a clock reason is a real throttle"},
  };
  return specs;
}

}  // namespace gpulens::diagnosis

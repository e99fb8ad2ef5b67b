// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/state_facts.hpp"

#include <algorithm>

namespace gpulens::diagnosis {

std::optional<double> busiest_math_pipe(const WindowStats& window) {
  std::optional<double> most;
  for (Metric m :
       {Metric::TensorActive, Metric::Fp16Active, Metric::Fp32Active, Metric::Fp64Active}) {
    if (const auto v = window.get(m)) most = std::max(most.value_or(0.0), *v);
  }
  return most;
}

StateFacts measure_state_facts(const WindowStats& w, const HardwareLimits& hw, const Thresholds& th,
                               const std::vector<PeerActivity>& peers) {
  StateFacts f;
  f.gpu_util = w.get(Metric::GpuUtil);
  f.sm_active = w.get(Metric::SmActive);
  f.tensor_active = w.get(Metric::TensorActive);
  f.float_pipes = busiest_math_pipe(w);
  f.int_active = w.get(Metric::IntActive);
  if (f.int_active && f.sm_active && *f.sm_active >= 1.0) {
    f.int_share = std::min(1.0, *f.int_active / *f.sm_active);
  }
  f.process_cpu_pct = w.procs.top_cpu_pct;
  f.process_at_full_core = f.process_cpu_pct && *f.process_cpu_pct >= th.host_busy_cpu_pct_min;
  f.dram_active = w.get(Metric::DramActive);
  f.mem_util = w.get(Metric::MemUtil);
  // SM activity cannot exceed kernel time; when it reads higher, the two counters
  // averaged over different intervals (a transition), so kernel time is at least
  // the SM activity.
  const double kernel_util = std::max(f.gpu_util.value_or(0), f.sm_active.value_or(0));
  if (f.sm_active && kernel_util >= 1.0) {
    f.sm_ratio = std::clamp(*f.sm_active / kernel_util, 0.0, 1.0);
  }
  if (f.dram_active && hw.dram_practical_peak_pct > 0) {
    f.dram_share = *f.dram_active / hw.dram_practical_peak_pct;
  }
  const auto rx = w.get(Metric::PcieRxMibs);
  const auto tx = w.get(Metric::PcieTxMibs);
  if (rx || tx) {
    f.pcie_host_to_device = rx.value_or(0) >= tx.value_or(0);
    f.pcie_mibs = std::max(rx.value_or(0), tx.value_or(0));
    if (hw.pcie_mibs) f.pcie_share = *f.pcie_mibs / *hw.pcie_mibs;
  }
  const auto nrx = w.get(Metric::NvlinkRxMibs);
  const auto ntx = w.get(Metric::NvlinkTxMibs);
  if (nrx || ntx) {
    f.nvlink_mibs = std::max(nrx.value_or(0), ntx.value_or(0));
    if (hw.nvlink_mibs) f.nvlink_share = *f.nvlink_mibs / *hw.nvlink_mibs;
  }
  if (f.sm_active && hw.sm_count) f.busy_sms = *f.sm_active / 100.0 * *hw.sm_count;
  for (const auto& p : peers) {
    if (p.sm_active && (!f.peer_sm_active || *p.sm_active > *f.peer_sm_active)) {
      f.peer_sm_active = p.sm_active;
      f.peer_gpu = p.gpu;
    }
  }
  // What the listed processes hold; failing that, device memory in use (a
  // process in another container may be invisible yet hold memory).
  if (w.procs.known && w.procs.used_mib) {
    f.mem_held_mib = w.procs.used_mib;
  } else if (const auto used = w.get(Metric::MemUsedMib)) {
    f.mem_held_mib = used;
  }
  if (f.mem_held_mib && hw.mem_total_mib && *hw.mem_total_mib > 0) {
    f.mem_held_share = *f.mem_held_mib / *hw.mem_total_mib;
  }
  if (w.samples > 0) f.kernel_sample_share = w.kernel_sample_share;
  if (f.pcie_share) {
    f.pcie_saturated = *f.pcie_share >= th.pcie_saturated_share_min;
    // Sustained copying below the link's rate with a process at a full core is
    // host-staged whatever the share: pageable copies of a few MiB each, with
    // host work between them, can average 1-2 % of a Gen5 link.
    // Only device-to-host traffic counts below the share line: command
    // submission flows host to device (the GPU fetches pushbuffers from host
    // memory), ~460 MiB/s on the launch-bound reference recording.
    f.copying = *f.pcie_share >= th.pcie_copy_share_min ||
                w.get(Metric::PcieTxMibs).value_or(0) >= th.copy_traffic_mibs_min;
    f.copies_host_limited = !f.pcie_saturated && f.copying && f.process_cpu_pct &&
                            *f.process_cpu_pct >= th.host_copy_cpu_pct_min;
  }
  const auto host_cpu = w.get(Metric::HostCpuPct);
  // Beyond the processes of every GPU of the host where the engine counted
  // them (a job's other ranks are not what this GPU waits on), else this GPU's.
  const auto gpu_procs_cpu =
      w.procs.host_gpus_cpu_pct ? w.procs.host_gpus_cpu_pct : w.procs.cpu_pct;
  if (host_cpu && hw.host_cpu_count && *hw.host_cpu_count > 0 && gpu_procs_cpu) {
    f.other_cpu_cores =
        std::max(0.0, *host_cpu / 100.0 * *hw.host_cpu_count - *gpu_procs_cpu / 100.0);
  }
  f.math_idle = f.float_pipes && *f.float_pipes < th.math_idle_max;
  f.int_work = f.int_share && *f.int_share >= th.int_work_share_min;
  return f;
}

}  // namespace gpulens::diagnosis

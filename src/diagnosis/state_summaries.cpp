// SPDX-License-Identifier: Apache-2.0
// Each state's sentence of what was seen (the state table's `summary`).
#include "diagnosis/fix_format.hpp"
#include "diagnosis/fix_texts.hpp"

namespace gpulens::diagnosis::summary {

using fmt_fix::gbytes_s;
using fmt_fix::pct;

std::string idle(const StateFinding& s, const HardwareLimits&) {
  return fmt::format("No kernel ran (utilization {}).", pct(s.facts.gpu_util));
}

std::string idle_holding_memory(const StateFinding& s, const HardwareLimits&) {
  const StateFacts& f = s.facts;
  return fmt::format("No kernel ran, but {} ({} of device memory) is held.",
                     gib_text(f.mem_held_mib.value_or(0)),
                     share_text(f.mem_held_share.value_or(0)));
}

std::string compute_bound(const StateFinding& s, const HardwareLimits&) {
  const StateFacts& f = s.facts;
  return fmt::format(
      "The SMs are busy: {} SM activity at {} utilization{}.", pct(f.sm_active), pct(f.gpu_util),
      f.tensor_active ? fmt::format(", tensor pipes {}", pct(f.tensor_active)) : std::string());
}

std::string memory_bound(const StateFinding& s, const HardwareLimits& hw) {
  const StateFacts& f = s.facts;
  if (f.memory_stall) {
    return fmt::format(
        "The warps wait on memory: the SMs are resident ({}) but no math pipe works "
        "(busiest {}), with DRAM at {} of its practical peak.",
        pct(f.sm_active), pct(f.float_pipes), share_text(f.dram_share.value_or(0)));
  }
  if (!f.dram_active) {
    // Judged from the classic memory controller metric (no GPM): a share of
    // time, not of bandwidth.
    return fmt::format(
        "Kernels run {} of the time and the memory controller is busy {} of it; DRAM "
        "bandwidth and what the SMs do were not measured.",
        pct(f.gpu_util), pct(f.mem_util));
  }
  return fmt::format("DRAM bandwidth is the limit: {} of peak ({} of the practical {}).",
                     pct(f.dram_active), share_text(f.dram_share.value_or(0)),
                     points_text(hw.dram_practical_peak_pct));
}

std::string interconnect_bound(const StateFinding& s, const HardwareLimits&) {
  const StateFacts& f = s.facts;
  return fmt::format("NVLink carries {}{} while SM activity is only {}.",
                     gbytes_s(f.nvlink_mibs.value_or(0)),
                     f.nvlink_share ? fmt::format(" ({} of the links)", share_text(*f.nvlink_share))
                                    : std::string(),
                     pct(f.sm_active));
}

std::string pcie_bound(const StateFinding& s, const HardwareLimits&) {
  const StateFacts& f = s.facts;
  return fmt::format(
      "PCIe {} at {}{} while the SMs are idle ({}).",
      f.pcie_host_to_device ? "host-to-device" : "device-to-host",
      gbytes_s(f.pcie_mibs.value_or(0)),
      f.pcie_share ? fmt::format(" ({} of the link)", share_text(*f.pcie_share)) : std::string(),
      pct(f.sm_active));
}

std::string host_bound(const StateFinding& s, const HardwareLimits&) {
  const StateFacts& f = s.facts;
  if (f.waits_on_process) {
    return fmt::format(
        "No kernel runs while a process of this GPU keeps a CPU core busy ({}): "
        "the GPU waits for that process.",
        pct(f.process_cpu_pct));
  }
  if (!f.sm_active) {
    return fmt::format("Kernels run only {} of the time: the GPU waits on something else.",
                       pct(f.gpu_util));
  }
  return fmt::format(
      "The GPU is idle {} of the time; when kernels run the SMs are "
      "{} used ({} of kernel time).",
      points_text(100 - f.gpu_util.value_or(0)), f.sm_ratio.value_or(0) >= 0.6 ? "well" : "partly",
      share_text(f.sm_ratio.value_or(0)));
}

std::string launch_bound(const StateFinding& s, const HardwareLimits&) {
  const StateFacts& f = s.facts;
  return fmt::format(
      "Kernels run {} of the time but almost no SM works ({}): the kernels "
      "are tiny.",
      pct(f.gpu_util), pct(f.sm_active));
}

std::string sm_underused(const StateFinding& s, const HardwareLimits& hw) {
  const StateFacts& f = s.facts;
  const auto sms = fmt_fix::sms_busy(f, hw);
  return fmt::format("A kernel runs {} of the time but only {} of the GPU works{}.",
                     pct(f.gpu_util), pct(f.sm_active),
                     sms.empty() ? std::string() : " (" + sms + " busy)");
}

std::string waiting_on_peer(const StateFinding& s, const HardwareLimits&) {
  const StateFacts& f = s.facts;
  if (f.peer_slow_rank) {
    return fmt::format(
        "A kernel is resident {} of the time with few SMs working ({}), while GPU {} of the "
        "same job, doing the same work, has one resident only {} of the time: this GPU waits "
        "for it in collectives.",
        pct(f.gpu_util), pct(f.sm_active), f.peer_gpu.value_or(-1), pct(f.peer_util));
  }
  return fmt::format(
      "A kernel is \"running\" ({} utilization) with the SMs idle ({}) while "
      "GPU {} of the same job is busy ({}).",
      pct(f.gpu_util), pct(f.sm_active), f.peer_gpu.value_or(-1), pct(f.peer_sm_active));
}

std::string busy(const StateFinding& s, const HardwareLimits&) {
  const StateFacts& f = s.facts;
  return fmt::format(
      "Kernels run {} of the time{}; how well they use the SMs was not measured (no SM "
      "activity).",
      pct(f.gpu_util),
      f.mem_util ? fmt::format(", the memory controller busy {}", pct(f.mem_util)) : std::string());
}

std::string unknown(const StateFinding& s, const HardwareLimits&) {
  if (!s.cannot_tell.empty()) return "Cannot tell: " + s.cannot_tell.front() + ".";
  return "Not enough data yet.";
}

}  // namespace gpulens::diagnosis::summary

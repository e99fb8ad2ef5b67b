// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/classifier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_units.hpp"

namespace gpulens::diagnosis {
namespace {

// NVML's memory utilization is the share of time the memory controller was
// reading or writing device memory, not a share of bandwidth: at 80 % of the time
// the kernels touch DRAM nearly always, the best a GPU without GPM can tell.
constexpr double kMemoryControllerBusyPct = 80.0;

// 0.5 at the threshold, rising to 1 when the value is `scale` beyond it: a
// verdict that barely crossed its line is a coin toss, a clear one is not.
double margin(double value, double threshold, double scale) {
  if (scale <= 0) return 1.0;
  return 0.5 + 0.5 * std::min(1.0, std::abs(value - threshold) / scale);
}

// Classification of one window, step by step, most specific explanation first.
class Classifier {
 public:
  Classifier(const WindowStats& w, const HardwareLimits& hw, const Thresholds& th,
             const std::vector<PeerActivity>& peers, double window_length_s)
      : w_(w), hw_(hw), th_(th), peers_(peers), window_length_s_(window_length_s) {}

  StateFinding run() {
    out_.facts = measure_state_facts(w_, hw_, th_, peers_);
    kernel_util_ = std::max(out_.facts.gpu_util.value_or(0), out_.facts.sm_active.value_or(0));
    decide();
    // A young window (just restarted) has seen less of the workload.
    const double coverage =
        window_length_s_ > 0 ? std::min(1.0, w_.covered_s / window_length_s_) : 1.0;
    out_.confidence = std::clamp(out_.confidence * (0.75 + 0.25 * coverage), 0.0, 1.0);
    return std::move(out_);
  }

 private:
  void set(GpuState state, double confidence) {
    out_.state = state;
    out_.confidence = confidence;
  }
  void add(Evidence e) { out_.evidence.push_back(std::move(e)); }
  // verdict/evidence_gaps.cpp finds what would settle each of these by its first
  // words: a new one, or new first words, belongs in its table too.
  void cannot(std::string why) { out_.cannot_tell.push_back(std::move(why)); }

  void decide() {
    const StateFacts& f = out_.facts;
    if (!f.gpu_util && !f.sm_active) {
      set(GpuState::Unknown, 0.0);
      cannot("neither utilization nor SM activity was measured");
      return;
    }
    if (!f.sm_active) cannot("SM activity not available: " + hw_.gpm_missing_reason);
    if (!f.gpu_util) cannot("utilization not measured: kernel time assumed from SM activity");
    if (f.sm_active && !f.dram_active)
      cannot("DRAM bandwidth not measured: memory_bound not judged");
    if (f.sm_active && !f.pcie_mibs) cannot("PCIe traffic not measured: pcie_bound not judged");
    if (!w_.procs.known)
      cannot("processes not sampled: memory held counted from device memory in use");

    const double util = kernel_util_;
    // Copy engines at work are GPU work even when utilization reads ~0.
    const bool copying =
        f.pcie_share && (*f.pcie_share >= th_.pcie_copy_share_min || f.copies_host_limited);
    if (util < th_.idle_util_max && !copying) {
      decide_idle(util);
      return;
    }
    if (util < th_.host_work_util_max && !copying && f.process_at_full_core) {
      decide_host_work(util);
      return;
    }
    if (!f.sm_active) {
      decide_without_sm_activity(util);
      return;
    }
    const double ratio = f.sm_ratio.value_or(0.0);
    add(ev("gpu_util", f.gpu_util, {}, {}, "%"));
    add(ev("sm_active", f.sm_active, {}, {}, "%"));
    if (check_pcie(ratio) || check_nvlink(ratio) || check_memory() ||
        check_memory_stall(util, ratio) || check_waiting_on_peer(util, ratio) ||
        check_slower_rank(util, ratio))
      return;
    if (util < th_.host_util_max) {
      decide_part_time(util, ratio);
    } else {
      decide_full_time(util, ratio);
    }
  }

  void decide_idle(double util) {
    const StateFacts& f = out_.facts;
    add(ev("gpu_util", util, "<", th_.idle_util_max, "%"));
    if (f.sm_active) add(ev("sm_active", f.sm_active, "<", th_.idle_util_max, "%"));
    if (f.process_at_full_core) {
      wait_for_process("busy on the CPU while no kernel runs");
      return;
    }
    if (waits_on_other_processes()) return;
    decide_idle_memory(margin(util, th_.idle_util_max, th_.idle_util_max));
  }

  // Kernels run a little (under host_work_util_max) while a process of the GPU
  // keeps a core busy: too little GPU time for that core to be spinning in
  // synchronisations, so the process works on the CPU and the GPU waits for it.
  void decide_host_work(double util) {
    add(ev("gpu_util", util, "<", th_.host_work_util_max, "%",
           "too little kernel time for a core to spin in synchronisations"));
    wait_for_process(fmt::format("busy on the CPU while kernels run under {:g} % of the time",
                                 th_.host_work_util_max));
  }

  // Not unused: its process is at work on the CPU and the GPU waits for it.
  void wait_for_process(std::string_view what) {
    const StateFacts& f = out_.facts;
    add(ev("process_cpu_pct", f.process_cpu_pct, ">=", th_.host_busy_cpu_pct_min, "%",
           fmt::format("{} (pid {}) {}: the GPU waits for it", w_.procs.top_cpu_name,
                       w_.procs.top_cpu_pid, what)));
    out_.facts.waits_on_process = true;
    set(GpuState::HostBound,
        std::min(0.7, margin(*f.process_cpu_pct, th_.host_busy_cpu_pct_min, 10.0)));
  }

  // A GPU that runs a short step now and then (kernels in some samples, under
  // 1 % of the time) while its process waits and other processes keep cores
  // busy: it waits on them. A job's DataLoader workers have no CUDA context, so
  // only the host's total shows them; a GPU left idle shows no steps at all.
  bool waits_on_other_processes() {
    const StateFacts& f = out_.facts;
    if (!f.other_cpu_cores || *f.other_cpu_cores < th_.other_cpu_cores_min) return false;
    if (!f.kernel_sample_share || *f.kernel_sample_share < th_.stepping_kernel_share_min)
      return false;
    add(ev("kernel_sample_share", f.kernel_sample_share, ">=", th_.stepping_kernel_share_min,
           "ratio", "the GPU still runs steps now and then: not left idle"));
    add(ev("other_cpu_cores", f.other_cpu_cores, ">=", th_.other_cpu_cores_min, "cores",
           "host cores busy beyond this GPU's processes (DataLoader workers, other host work)"));
    if (f.process_cpu_pct) {
      add(ev("process_cpu_pct", f.process_cpu_pct, "<", th_.host_busy_cpu_pct_min, "%",
             fmt::format("{} (pid {}) mostly waits", w_.procs.top_cpu_name, w_.procs.top_cpu_pid)));
    }
    out_.facts.waits_on_other_processes = true;
    set(GpuState::HostBound,
        std::min(0.6, margin(*f.other_cpu_cores, th_.other_cpu_cores_min, 2.0)));
    return true;
  }

  // Kernels showed in only a few of the window's samples and almost no SM
  // worked in them: blips on an idle GPU, not a launch-bound job.
  void decide_blips(double util, double ratio) {
    const StateFacts& f = out_.facts;
    add(ev("kernel_sample_share", f.kernel_sample_share, "<", th_.launch_kernel_share_min, "ratio",
           "kernels in only a few samples: blips on an idle GPU"));
    add(ev("gpu_util", util, {}, {}, "%"));
    add(ev("sm_active/gpu_util", ratio, "<", th_.launch_ratio_max, "ratio"));
    decide_idle_memory(margin(f.kernel_sample_share.value_or(0), th_.launch_kernel_share_min, 0.5));
  }

  void decide_idle_memory(double conf) {
    const StateFacts& f = out_.facts;
    if (f.mem_held_share && *f.mem_held_share >= th_.idle_memory_share_min) {
      add(ev("memory_held_share", *f.mem_held_share, ">=", th_.idle_memory_share_min, "ratio",
             gib_text(*f.mem_held_mib) + " held"));
      set(GpuState::IdleHoldingMemory,
          std::min(conf, margin(*f.mem_held_share, th_.idle_memory_share_min, 0.25)));
      return;
    }
    if (f.mem_held_share) {
      add(ev("memory_held_share", *f.mem_held_share, "<", th_.idle_memory_share_min, "ratio"));
    } else {
      cannot("device memory size or use unknown: idle_holding_memory not judged");
    }
    set(GpuState::Idle, conf);
  }

  // Classic metrics only (no GPM: Volta to Ada, or GPM denied): kernel time and
  // the memory controller's busy time are known, what the SMs did in them is not.
  // Kernel time is work whatever the SMs did, so it is never `unknown`: `busy`
  // says what was measured and the cannot_tell line what was not.
  void decide_without_sm_activity(double util) {
    const StateFacts& f = out_.facts;
    add(ev("gpu_util", util, {}, {}, "%"));
    if (util < th_.idle_util_max) {
      // Reached only with copy traffic (decide()): copy engines at work while no
      // kernel runs are copy time, whatever the SMs would have said.
      const char* key = f.pcie_host_to_device ? "pcie_rx_mibs" : "pcie_tx_mibs";
      add(ev(key, f.pcie_mibs, {}, {}, "MiB/s", "copies while no kernel runs"));
      set(GpuState::PcieBound, 0.35);
      return;
    }
    if (f.mem_util && *f.mem_util >= kMemoryControllerBusyPct && util >= th_.host_util_max) {
      add(ev("mem_util", f.mem_util, ">=", kMemoryControllerBusyPct, "%",
             "memory controller busy (classic metric; DRAM bandwidth not measured)"));
      set(GpuState::MemoryBound, 0.35);
      return;
    }
    if (util < th_.host_util_max) {
      add(ev("gpu_util", util, "<", th_.host_util_max, "%", "the GPU waits part of the time"));
      cannot("without SM activity, tiny kernels (launch_bound) look like waits on the host");
      set(GpuState::HostBound, 0.35);
      return;
    }
    add(ev("gpu_util", util, ">=", th_.host_util_max, "%", "kernels run most of the time"));
    if (f.mem_util) add(ev("mem_util", f.mem_util, {}, {}, "%", "memory controller busy"));
    cannot("kernels run most of the time; whether they fill the SMs needs SM activity");
    // What is claimed (kernels resident) is measured: as sure as utilization is
    // clear of the part-time line.
    set(GpuState::Busy, margin(util, th_.host_util_max, 100.0 - th_.host_util_max));
  }

  bool check_pcie(double ratio) {
    const StateFacts& f = out_.facts;
    if (!f.pcie_share || ratio >= th_.busy_ratio_min) return false;
    const char* key = f.pcie_host_to_device ? "pcie_rx_mibs" : "pcie_tx_mibs";
    if (f.pcie_saturated) {
      add(ev(key, f.pcie_mibs, {}, {}, "MiB/s", hw_.pcie_basis));
      add(ev("pcie_link_share", *f.pcie_share, ">=", th_.pcie_saturated_share_min, "ratio"));
      add(ev("sm_active/gpu_util", ratio, "<", th_.busy_ratio_min, "ratio"));
      set(GpuState::PcieBound, std::min(margin(*f.pcie_share, th_.pcie_saturated_share_min, 0.3),
                                        margin(ratio, th_.busy_ratio_min, 0.3)));
      return true;
    }
    // Idle SMs with copy traffic: the time is copy time, not kernel time, at
    // any link share (never launch_bound). Below the share line, sustained
    // traffic staged by a busy process is copying too.
    const bool over_share = *f.pcie_share >= th_.pcie_copy_share_min;
    if ((over_share || f.copies_host_limited) && ratio < th_.launch_ratio_max) {
      add(ev(key, f.pcie_mibs, over_share ? "" : ">=",
             over_share ? std::nullopt : std::optional<double>(th_.copy_traffic_mibs_min), "MiB/s",
             hw_.pcie_basis));
      add(ev("pcie_link_share", *f.pcie_share, over_share ? ">=" : "<", th_.pcie_copy_share_min,
             "ratio", "copies run while the SMs are idle: copy time, not kernel time"));
      add(ev("sm_active/gpu_util", ratio, "<", th_.launch_ratio_max, "ratio"));
      copy_cpu_context();
      set(GpuState::PcieBound, std::min(0.8, margin(*f.pcie_share, th_.pcie_copy_share_min, 0.1)));
      return true;
    }
    return false;
  }

  // Why copies run below the link's rate: a process at a full CPU core stages them.
  void copy_cpu_context() {
    if (!w_.procs.top_cpu_pct) return;
    const bool limited = out_.facts.copies_host_limited;
    add(ev("process_cpu_pct", w_.procs.top_cpu_pct, limited ? ">=" : "<", th_.host_copy_cpu_pct_min,
           "%",
           fmt::format("{} (pid {}){}", w_.procs.top_cpu_name, w_.procs.top_cpu_pid,
                       limited ? ": the host stages the copies (pageable memory)" : "")));
  }

  bool check_nvlink(double ratio) {
    const StateFacts& f = out_.facts;
    if (!f.nvlink_mibs || ratio >= th_.busy_ratio_min) return false;
    if (f.nvlink_share) {
      if (*f.nvlink_share < th_.nvlink_busy_share_min) return false;
      add(ev("nvlink_mibs", f.nvlink_mibs, {}, {}, "MiB/s", hw_.nvlink_basis));
      add(ev("nvlink_link_share", *f.nvlink_share, ">=", th_.nvlink_busy_share_min, "ratio"));
      add(ev("sm_active/gpu_util", ratio, "<", th_.busy_ratio_min, "ratio"));
      set(GpuState::InterconnectBound,
          std::min(margin(*f.nvlink_share, th_.nvlink_busy_share_min, 0.3),
                   margin(ratio, th_.busy_ratio_min, 0.3)));
      return true;
    }
    // NVLink capacity unknown: traffic beyond what the PCIe link could carry is
    // heavy by any measure, but say that the verdict rests on less.
    if (!hw_.pcie_mibs || *f.nvlink_mibs < *hw_.pcie_mibs) return false;
    add(ev("nvlink_mibs", f.nvlink_mibs, ">=", hw_.pcie_mibs, "MiB/s",
           "NVLink capacity unknown: compared with the PCIe link"));
    add(ev("sm_active/gpu_util", ratio, "<", th_.busy_ratio_min, "ratio"));
    set(GpuState::InterconnectBound, 0.5);
    return true;
  }

  bool check_memory() {
    const StateFacts& f = out_.facts;
    if (!f.dram_share || *f.dram_share < th_.memory_bound_share_min) return false;
    // DRAM is the limit unless the tensor pipes are busier still (a large GEMM
    // streams operands hard but waits on math, not memory).
    if (f.tensor_active && *f.tensor_active > *f.dram_active) return false;
    add(ev(
        "dram_active", f.dram_active, {}, {}, "%",
        fmt::format("practical peak {} of theoretical", points_text(hw_.dram_practical_peak_pct))));
    add(ev("dram_practical_share", *f.dram_share, ">=", th_.memory_bound_share_min, "ratio"));
    if (f.tensor_active) add(ev("tensor_active", f.tensor_active, "<=", f.dram_active, "%"));
    set(GpuState::MemoryBound, margin(*f.dram_share, th_.memory_bound_share_min, 0.2));
    return true;
  }

  // SMs resident (the busy line) while no tensor or FP pipe works and the
  // integer pipe does not either, with DRAM well loaded: the warps wait on
  // memory (a random gather, a pointer chase), short of DRAM's streaming peak
  // because the accesses are scattered. Nothing to compute, so compute advice
  // has no premise.
  bool check_memory_stall(double util, double ratio) {
    StateFacts& f = out_.facts;
    if (!f.dram_share || !f.float_pipes || util < th_.host_util_max || ratio < th_.busy_ratio_min) {
      return false;
    }
    if (*f.float_pipes >= th_.math_idle_max || *f.dram_share < th_.memory_stall_dram_share_min)
      return false;
    if (f.int_share && *f.int_share >= th_.int_work_share_min) return false;
    add(ev("sm_active/gpu_util", ratio, ">=", th_.busy_ratio_min, "ratio", "warps resident"));
    add(ev("float_pipes_max", f.float_pipes, "<", th_.math_idle_max, "%",
           "busiest tensor/FP16/FP32/FP64 pipe: no math runs"));
    if (f.int_share) {
      add(ev("int_active/sm_active", f.int_share, "<", th_.int_work_share_min, "ratio",
             "no integer work either"));
    } else {
      cannot("integer pipe not measured: integer work cannot be told from a memory stall");
    }
    add(ev("dram_practical_share", *f.dram_share, ">=", th_.memory_stall_dram_share_min, "ratio",
           "the warps wait on memory: scattered or latency-bound access"));
    f.memory_stall = true;
    set(GpuState::MemoryBound,
        std::min(margin(*f.dram_share, th_.memory_stall_dram_share_min, 0.2),
                 margin(*f.float_pipes, th_.math_idle_max, th_.math_idle_max)));
    return true;
  }

  // Whether a peer does the same work as this GPU, and the evidence for it: the
  // busiest math pipes when both were measured and one works, else SM activity.
  bool same_work(const PeerActivity& p, std::vector<Evidence>* why) const {
    const StateFacts& f = out_.facts;
    if (f.float_pipes && p.math_active &&
        std::max(*f.float_pipes, *p.math_active) >= th_.math_idle_max) {
      const double hi = std::max(*f.float_pipes, *p.math_active);
      const double ratio = std::min(*f.float_pipes, *p.math_active) / hi;
      if (why) {
        why->push_back(
            ev("peer_math_ratio", ratio, ">=", th_.peer_same_math_ratio_min, "ratio",
               fmt::format("the same math on both: busiest math pipe {} here, {} on "
                           "GPU {}",
                           points_text(*f.float_pipes, 1), points_text(*p.math_active, 1), p.gpu)));
      }
      return ratio >= th_.peer_same_math_ratio_min;
    }
    const double diff = std::abs(*f.sm_active - *p.sm_active);
    if (why) {
      why->push_back(ev("peer_sm_active_difference", diff, "<=", th_.peer_same_work_points,
                        "points",
                        "the same work on both (judged by SM activity: no math pipe measured or "
                        "at work, so a wait's spinning is not told from work)"));
    }
    return diff <= th_.peer_same_work_points;
  }

  // A slower rank: another GPU of the job does the same work (same_work) with a
  // kernel resident far less of the time. In a
  // synchronous job every rank runs the same collectives, so this GPU's extra
  // resident time is a collective waiting for that rank, whose GPU idles while
  // its process is held up on the host. A peer that runs nothing is not a rank
  // at work (an unused GPU, or a hang the stalled alert reports).
  bool check_slower_rank(double util, double ratio) {
    StateFacts& f = out_.facts;
    if (!f.sm_active || util < th_.host_util_max || ratio >= th_.busy_ratio_min) return false;
    const PeerActivity* slow = nullptr;
    for (const auto& p : peers_) {
      if (!p.gpu_util || !p.sm_active || *p.gpu_util < th_.idle_util_max) continue;
      if (util - *p.gpu_util < th_.peer_gap_points) continue;
      if (!same_work(p, nullptr)) continue;
      if (!slow || *p.gpu_util < *slow->gpu_util) slow = &p;
    }
    if (!slow) return false;
    f.peer_gpu = slow->gpu;
    f.peer_sm_active = slow->sm_active;
    f.peer_util = slow->gpu_util;
    f.peer_slow_rank = true;
    add(ev("sm_active/gpu_util", ratio, "<", th_.busy_ratio_min, "ratio"));
    add(ev("peer_util_gap", util - *slow->gpu_util, ">=", th_.peer_gap_points, "points",
           fmt::format("GPU {} of the same job has a kernel resident only {} of the time",
                       slow->gpu, points_text(*slow->gpu_util, 1))));
    std::vector<Evidence> why;
    same_work(*slow, &why);
    for (auto& e : why) add(std::move(e));
    set(GpuState::WaitingOnPeer,
        margin(util - *slow->gpu_util, th_.peer_gap_points, th_.peer_gap_points));
    return true;
  }

  bool check_waiting_on_peer(double util, double ratio) {
    const StateFacts& f = out_.facts;
    // Any kernel time that keeps SMs under the busy line can be the wait: a rank
    // that computes for a third of a step and spins in the collective for the rest
    // reads 0.36 on 4 H200s (NCCL's waiting kernel holds ~18 % of the SMs), not
    // under 0.3. The peer gap is what tells the wait from a small-kernel problem,
    // which every rank of one program would share.
    if (!f.peer_sm_active || util < th_.host_util_max || ratio >= th_.busy_ratio_min) return false;
    const double gap = *f.peer_sm_active - *f.sm_active;
    if (gap < th_.peer_gap_points) return false;
    add(ev("sm_active/gpu_util", ratio, "<", th_.busy_ratio_min, "ratio"));
    add(ev("peer_sm_active_gap", gap, ">=", th_.peer_gap_points, "points",
           fmt::format("GPU {} of the same job at {} SM activity", *f.peer_gpu,
                       points_text(*f.peer_sm_active, 1))));
    set(GpuState::WaitingOnPeer, margin(gap, th_.peer_gap_points, th_.peer_gap_points));
    return true;
  }

  // The GPU is idle a substantial share of the time.
  void decide_part_time(double util, double ratio) {
    add(ev("gpu_util", util, "<", th_.host_util_max, "%"));
    const double util_conf = margin(util, th_.host_util_max, 40.0);
    if (ratio >= th_.busy_ratio_min) {
      add(ev("sm_active/gpu_util", ratio, ">=", th_.busy_ratio_min, "ratio",
             "kernels are large when they run"));
      set(GpuState::HostBound, std::min(util_conf, margin(ratio, th_.busy_ratio_min, 0.3)));
    } else if (ratio < th_.launch_ratio_max) {
      if (out_.facts.kernel_sample_share &&
          *out_.facts.kernel_sample_share < th_.launch_kernel_share_min) {
        out_.evidence.clear();
        decide_blips(util, ratio);
        return;
      }
      add(ev("sm_active/gpu_util", ratio, "<", th_.launch_ratio_max, "ratio",
             "almost no SM works while kernels run"));
      add(ev("kernel_sample_share", out_.facts.kernel_sample_share,
             ">=", th_.launch_kernel_share_min, "ratio"));
      set(GpuState::LaunchBound, std::min(util_conf, margin(ratio, th_.launch_ratio_max, 0.3)));
    } else {
      // Kernels of middling width with gaps between them: the gaps cost more.
      add(ev("sm_active/gpu_util", ratio, "<", th_.busy_ratio_min, "ratio",
             "kernels are of middling width"));
      set(GpuState::HostBound, std::min(0.5, util_conf));
    }
    host_cpu_context();
  }

  // A kernel runs (nearly) all the time.
  void decide_full_time(double util, double ratio) {
    add(ev("gpu_util", util, ">=", th_.host_util_max, "%"));
    if (ratio >= th_.busy_ratio_min) {
      add(ev("sm_active/gpu_util", ratio, ">=", th_.busy_ratio_min, "ratio"));
      if (out_.facts.tensor_active) add(ev("tensor_active", out_.facts.tensor_active, {}, {}, "%"));
      set(GpuState::ComputeBound,
          std::min(margin(ratio, th_.busy_ratio_min, 0.3), margin(util, th_.host_util_max, 30.0)));
      return;
    }
    std::string note;
    if (out_.facts.busy_sms) {
      note = fmt::format("about {:.0f} of {} SMs busy", *out_.facts.busy_sms, *hw_.sm_count);
    }
    add(ev("sm_active/gpu_util", ratio, "<", th_.busy_ratio_min, "ratio", note));
    set(GpuState::SmUnderused, margin(ratio, th_.busy_ratio_min, 0.3));
  }

  // Host CPU figures support (never decide) a host-side verdict.
  void host_cpu_context() {
    if (out_.facts.copies_host_limited) {
      add(ev("pcie_link_share", out_.facts.pcie_share, "<", th_.pcie_saturated_share_min, "ratio",
             "copies below the link's rate while a process keeps a core busy: host-staged "
             "(pageable) copies"));
    }
    if (w_.procs.top_cpu_pct) {
      add(ev("process_cpu_pct", w_.procs.top_cpu_pct, {}, {}, "%",
             fmt::format("{} (pid {}); 100 = one full core", w_.procs.top_cpu_name,
                         w_.procs.top_cpu_pid)));
    } else {
      cannot("no per-process CPU figures: cannot tell a single-threaded input pipeline");
    }
    if (const auto host = w_.get(Metric::HostCpuPct)) {
      add(ev("host_cpu_pct", host, {}, {}, "%", "whole host, 100 = every core"));
    }
  }

  const WindowStats& w_;
  const HardwareLimits& hw_;
  const Thresholds& th_;
  const std::vector<PeerActivity>& peers_;
  double window_length_s_;
  double kernel_util_ = 0;  // utilization, or SM activity where that reads higher
  StateFinding out_;
};

}  // namespace

StateFinding classify_state(const WindowStats& window, const HardwareLimits& hw,
                            const Thresholds& th, const std::vector<PeerActivity>& peers,
                            double window_length_s) {
  return Classifier(window, hw, th, peers, window_length_s).run();
}

}  // namespace gpulens::diagnosis

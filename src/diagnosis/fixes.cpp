// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/fixes.hpp"

#include <fmt/format.h>

#include "core/clock_reasons.hpp"
#include "core/text_units.hpp"

namespace gpulens::diagnosis {
namespace {

// Readings are points (0..100); below 1 % two decimals, so 1 busy SM of 132 reads 0.76 %.
std::string pct(std::optional<double> points) {
  return points_text(points, kSmallKept);
}

std::string gbytes_s(double mibs) {
  return gb_rate_text(mibs / kMibPerGb);
}

std::string sms_busy(const StateFacts& f, const HardwareLimits& hw) {
  if (!f.busy_sms || !hw.sm_count) return {};
  return fmt::format("about {:.0f} of {} SMs", *f.busy_sms, *hw.sm_count);
}

std::string process_label(const std::string& name, std::uint32_t pid) {
  if (name.empty()) return pid ? fmt::format("pid {}", pid) : "a process";
  return pid ? fmt::format("{} (pid {})", name, pid) : name;
}

}  // namespace

std::string host_limited_copies_fix(const StateFacts& f, const WindowStats& window) {
  const std::string who =
      window.procs.top_cpu_pct
          ? fmt::format("{} at {} of a CPU core",
                        process_label(window.procs.top_cpu_name, window.procs.top_cpu_pid),
                        points_text(*window.procs.top_cpu_pct))
          : std::string("a process at a full CPU core");
  return fmt::format(
      "Copies run at {}{} while {} stages them: pageable host memory. Copy from pinned memory "
      "(DataLoader pin_memory=True, tensor.pin_memory()) with non_blocking=True, and batch many "
      "small copies into one.",
      gbytes_s(f.pcie_mibs.value_or(0)),
      f.pcie_share ? fmt::format(" ({} of the link)", share_text(*f.pcie_share)) : std::string(),
      who);
}

std::string cost_per_hour_text(const FixContext& ctx) {
  if (!ctx.price_per_gpu_hour || *ctx.price_per_gpu_hour <= 0) return {};
  return fmt::format("{}{:.2f} per hour", ctx.currency, *ctx.price_per_gpu_hour);
}

std::string describe_state(const StateFinding& finding, const HardwareLimits& hw) {
  const StateFacts& f = finding.facts;
  switch (finding.state) {
    case GpuState::Idle:
      return fmt::format("No kernel ran (utilization {}).", pct(f.gpu_util));
    case GpuState::IdleHoldingMemory:
      return fmt::format("No kernel ran, but {} ({} of device memory) is held.",
                         gib_text(f.mem_held_mib.value_or(0)),
                         share_text(f.mem_held_share.value_or(0)));
    case GpuState::ComputeBound:
      return fmt::format(
          "The SMs are busy: {} SM activity at {} utilization{}.", pct(f.sm_active),
          pct(f.gpu_util),
          f.tensor_active ? fmt::format(", tensor pipes {}", pct(f.tensor_active)) : std::string());
    case GpuState::MemoryBound:
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
    case GpuState::InterconnectBound:
      return fmt::format(
          "NVLink carries {}{} while SM activity is only {}.", gbytes_s(f.nvlink_mibs.value_or(0)),
          f.nvlink_share ? fmt::format(" ({} of the links)", share_text(*f.nvlink_share))
                         : std::string(),
          pct(f.sm_active));
    case GpuState::PcieBound:
      return fmt::format("PCIe {} at {}{} while the SMs are idle ({}).",
                         f.pcie_host_to_device ? "host-to-device" : "device-to-host",
                         gbytes_s(f.pcie_mibs.value_or(0)),
                         f.pcie_share ? fmt::format(" ({} of the link)", share_text(*f.pcie_share))
                                      : std::string(),
                         pct(f.sm_active));
    case GpuState::HostBound:
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
          points_text(100 - f.gpu_util.value_or(0)),
          f.sm_ratio.value_or(0) >= 0.6 ? "well" : "partly", share_text(f.sm_ratio.value_or(0)));
    case GpuState::LaunchBound:
      return fmt::format(
          "Kernels run {} of the time but almost no SM works ({}): the kernels "
          "are tiny.",
          pct(f.gpu_util), pct(f.sm_active));
    case GpuState::SmUnderused: {
      const auto sms = sms_busy(f, hw);
      return fmt::format("A kernel runs {} of the time but only {} of the GPU works{}.",
                         pct(f.gpu_util), pct(f.sm_active),
                         sms.empty() ? std::string() : " (" + sms + " busy)");
    }
    case GpuState::WaitingOnPeer:
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
    case GpuState::Busy:
      return fmt::format(
          "Kernels run {} of the time{}; how well they use the SMs was not measured (no SM "
          "activity).",
          pct(f.gpu_util),
          f.mem_util ? fmt::format(", the memory controller busy {}", pct(f.mem_util))
                     : std::string());
    case GpuState::Unknown:
    case GpuState::Count:
      break;
  }
  if (!finding.cannot_tell.empty()) return "Cannot tell: " + finding.cannot_tell.front() + ".";
  return "Not enough data yet.";
}

std::string describe_throttle(const ThrottleFinding& t) {
  if (!t.throttled) return {};
  std::string out = t.cause;
  if (t.sm_clock_mhz && t.max_sm_clock_mhz) {
    out += fmt::format(": SM clock {:.0f} of {:.0f} MHz", *t.sm_clock_mhz, *t.max_sm_clock_mhz);
  }
  if (t.power_w && t.power_limit_w) {
    out += fmt::format(", {:.0f} of {:.0f} W", *t.power_w, *t.power_limit_w);
  }
  if (t.temp_c) out += fmt::format(", {:.0f} C", *t.temp_c);
  return out;
}

namespace {

// The GPU waits on the host. Which host work it is, the counters tell only in
// part: a process that waits (little CPU) waits on something outside itself,
// most often input; a process at a full core either synchronises every step
// (CUDA's wait spins) or does the work itself, and only a trace tells which.
void host_bound_fixes(const StateFacts& f, const WindowStats& window,
                      std::vector<std::string>& out) {
  const std::string who = process_label(window.procs.top_cpu_name, window.procs.top_cpu_pid);
  if (f.copies_host_limited) {
    out.push_back(host_limited_copies_fix(f, window));
    out.push_back("Keep data on the GPU between steps; copy once, not every iteration.");
    return;
  }
  if (f.waits_on_process) {
    out.push_back(fmt::format(
        "The GPU waits for its process (pid {}), busy on the CPU ({} of a core) with no "
        "kernel running: its GPU work waits for CPU work (tokenizing, compiling, "
        "preprocessing, evaluation on the CPU). Do that work before taking the GPU, in "
        "parallel worker processes, or overlapped with GPU work; cache what can be cached "
        "(tokenized data, compiled kernels).",
        window.procs.top_cpu_pid, points_text(f.process_cpu_pct.value_or(0))));
    return;
  }
  if (f.process_at_full_core) {
    out.push_back(fmt::format(
        "{} keeps a CPU core busy ({}) while the GPU waits. Two causes look alike in the "
        "counters: it synchronises every step (.item(), .cpu(), printing a loss, "
        "torch.cuda.synchronize(): the wait spins a core until the GPU drains), or it does the "
        "work itself (Python preprocessing in the loop, a DataLoader with num_workers=0). "
        "`gpulens run --kernels` counts the synchronisations and tells them apart.",
        who, points_text(*f.process_cpu_pct)));
    out.push_back(
        "If it synchronises: read values every N steps, keep running metrics on the GPU "
        "(accumulate a tensor, not a Python float) and log asynchronously. If it preprocesses: "
        "move the work into DataLoader workers (num_workers > 0) or onto the GPU.");
  } else if (f.process_cpu_pct) {
    out.push_back(fmt::format(
        "{} mostly waits ({} of a core) while its GPU idles: it waits on something outside "
        "itself, most often input (DataLoader workers, storage, the network). Feed the GPU "
        "faster: more DataLoader workers (num_workers), persistent_workers=True, "
        "prefetch_factor >= 2, cheaper transforms or GPU-side decoding (NVIDIA DALI).",
        who, points_text(*f.process_cpu_pct)));
  } else {
    out.push_back(
        "The GPU waits on the host; without per-process CPU figures the cause cannot be told: "
        "input (DataLoader num_workers), per-step synchronisation (.item(), .cpu()) or host "
        "work in the loop. `gpulens run --kernels` counts synchronisations and tells them "
        "apart.");
  }
  if (f.copying) {
    out.push_back(
        "pin_memory=True and non_blocking copies; prefetch the next batch while this one "
        "computes.");
  }
}

}  // namespace

std::vector<std::string> fixes_for_state(const StateFinding& finding, const WindowStats& window,
                                         const HardwareLimits& hw, const FixContext& ctx) {
  const StateFacts& f = finding.facts;
  std::vector<std::string> out;
  switch (finding.state) {
    case GpuState::Idle:
      out.push_back("Nothing runs: if this GPU is not needed, release it or schedule work on it.");
      break;
    case GpuState::IdleHoldingMemory: {
      if (ctx.in_job) {
        // The job's own memory: ending it is not the advice; freeing what it
        // holds between its kernels, or ending it once its GPU work is done, is.
        out.push_back(fmt::format(
            "Your job holds {} between its kernels without running any: free what it no "
            "longer needs (del the tensors, then torch.cuda.empty_cache()), and release the GPU "
            "once its GPU work is done instead of keeping the process alive.",
            gib_text(f.mem_held_mib.value_or(0))));
        out.push_back(
            "If the job waits on something else (input, a checkpoint upload, another job), "
            "overlap that wait with GPU work or run it before taking the GPU.");
        break;
      }
      const auto who = process_label(window.procs.top_mem_name, window.procs.top_mem_pid);
      std::string cost = cost_per_hour_text(ctx);
      out.push_back(fmt::format("{} holds {} without running kernels: end it or free the "
                                "GPU (a notebook kernel left open, a finished job still alive)",
                                window.procs.known ? who : "A process",
                                gib_text(f.mem_held_mib.value_or(0))) +
                    (cost.empty() ? "." : "; an idle GPU costs " + cost + "."));
      out.push_back(
          "In PyTorch, torch.cuda.empty_cache() returns cached blocks; deleting the "
          "model and the optimizer releases the rest.");
      break;
    }
    case GpuState::ComputeBound:
      if (f.tensor_active && *f.tensor_active >= kTensorBusyPct) {
        // The tensor cores already do the math: precision advice would tell the
        // job what it does. What is left is doing less work per result.
        out.push_back(fmt::format(
            "The SMs are busy and the tensor pipes work ({}): the math already runs on tensor "
            "cores. Gains now come from less work per step: fused kernels (torch.compile, "
            "FlashAttention), fewer recomputations, a larger batch per launch.",
            pct(f.tensor_active)));
      } else if (f.int_work && f.math_idle) {
        // Integer math: tensor cores and narrower floats have nothing to take over.
        out.push_back(fmt::format(
            "The SMs are busy on integer work (integer pipe {}, the tensor and FP pipes under "
            "{}): lower-precision floating point cannot speed it up. Gains come from doing less "
            "of it: a cheaper hash or index computation, fewer passes over the data, work "
            "skipped or cached.",
            pct(f.int_active), pct(f.float_pipes)));
      } else if (f.math_idle) {
        // Resident warps that compute nothing are waiting, not computing.
        out.push_back(fmt::format(
            "The SMs are resident but no math pipe works (busiest tensor/FP pipe {}{}): the "
            "warps wait on something (memory latency, a lock or flag, atomics) rather than "
            "compute, so lower precision would not help. Profile one kernel (ncu --section "
            "WarpStateStats) to see what they wait on.",
            pct(f.float_pipes),
            f.int_active ? fmt::format(", integer pipe {}", pct(f.int_active)) : std::string()));
      } else if (f.tensor_active) {
        out.push_back(fmt::format(
            "Tensor pipes are mostly idle ({}) while the FP pipes work ({}): the math runs on "
            "CUDA cores. Use bf16/fp16 autocast or TF32 (torch.backends.cuda.matmul.allow_tf32 "
            "= True) so the tensor cores do it.",
            pct(f.tensor_active), pct(f.float_pipes)));
        out.push_back("Then fuse kernels (torch.compile) to cut the work itself.");
      } else {
        out.push_back(
            "The SMs are busy; which pipes do the math was not measured (GPM on Hopper or "
            "newer, or DCGM profiling metrics, would say). If it runs in FP32 on CUDA cores, "
            "mixed precision (bf16/fp16) moves it to the tensor cores; fused kernels "
            "(torch.compile) cut work either way.");
      }
      break;
    case GpuState::MemoryBound:
      if (f.memory_stall) {
        out.push_back(
            "The warps wait on scattered memory access, not on math: make accesses contiguous "
            "(sort or bucket the indices, gather fewer and larger rows), keep hot rows in cache "
            "or shared memory, and store the table narrower (bf16, fp8) to move fewer bytes.");
        break;
      }
      if (!f.dram_active) {
        // The memory controller's busy time is not bandwidth: the advice holds only
        // if DRAM is the limit, which GPM would measure.
        out.push_back(fmt::format(
            "The memory controller is busy {} of the time; whether DRAM bandwidth is the limit "
            "was not measured (GPM's DRAM activity, Hopper or newer, would say). If it is, move "
            "fewer bytes: fused kernels (FlashAttention, torch.compile, fused optimizers) keep "
            "data in registers and shared memory.",
            pct(f.mem_util)));
        break;
      }
      out.push_back(
          "Move fewer bytes: mixed precision halves them; fused kernels (FlashAttention, "
          "torch.compile, fused optimizers) keep data in registers and shared memory.");
      out.push_back("Larger batches raise arithmetic intensity when the weights dominate traffic.");
      break;
    case GpuState::InterconnectBound:
      out.push_back(
          "Overlap communication with compute: DDP gradient bucketing "
          "(bucket_cap_mb), FSDP prefetch, or larger micro-batches per all-reduce.");
      out.push_back(
          "Send fewer bytes: bf16 gradient all-reduce or gradient compression (PowerSGD).");
      out.push_back(
          "Check the topology with `nvidia-smi topo -m`: traffic should use NVLink, "
          "not PCIe or the CPU interconnect.");
      break;
    case GpuState::PcieBound:
      if (f.copies_host_limited) out.push_back(host_limited_copies_fix(f, window));
      out.push_back("Keep data on the GPU between steps; copy once, not every iteration.");
      if (!f.copies_host_limited) {
        out.push_back(
            "Use pinned host memory (DataLoader pin_memory=True, "
            "tensor.pin_memory()) with non_blocking=True copies.");
      }
      out.push_back(
          "Batch transfers into fewer, larger copies and overlap them with compute "
          "on a separate CUDA stream.");
      break;
    case GpuState::HostBound:
      host_bound_fixes(f, window, out);
      break;
    case GpuState::LaunchBound:
      // A loop that synchronises after every op and one that only launches look
      // alike in the counters: short kernels, the SMs mostly idle, a core busy
      // (CUDA's wait spins it). Only a trace's synchronisations tell them apart.
      if (f.process_at_full_core) {
        out.push_back(fmt::format(
            "{} keeps a CPU core busy ({}) feeding kernels of a few microseconds. Two causes "
            "look alike in the counters: launch overhead (each launch costs the host more than "
            "the kernel runs: launch fewer, bigger kernels with fusion, torch.compile, CUDA "
            "Graphs or larger batches) or a synchronisation after every op (.item(), .cpu(), "
            "torch.cuda.synchronize(): each kernel waits for the host's round trip; read values "
            "every N steps instead). `gpulens run --kernels` counts the synchronisations and "
            "tells them apart.",
            process_label(window.procs.top_cpu_name, window.procs.top_cpu_pid),
            points_text(*f.process_cpu_pct)));
      }
      out.push_back("Give each launch more work: larger batches, fewer and bigger kernels.");
      out.push_back(
          "Cut launch overhead with CUDA Graphs or "
          "torch.compile(mode=\"reduce-overhead\").");
      out.push_back("Fuse element-wise operations (torch.compile, custom fused kernels).");
      break;
    case GpuState::SmUnderused: {
      const auto sms = sms_busy(f, hw);
      out.push_back(
          fmt::format("{} busy: launch more blocks per kernel (at least one per SM, "
                      "ideally several waves) or use a larger batch.",
                      sms.empty() ? "Few SMs are" : sms));
      out.push_back(
          "If the work cannot grow, run several streams or processes side by side "
          "(MPS), or right-size the GPU (a MIG slice or a smaller GPU).");
      break;
    }
    case GpuState::WaitingOnPeer:
      if (f.peer_slow_rank) {
        out.push_back(fmt::format(
            "This GPU waits in collectives for GPU {}, which does the same work with its GPU "
            "idle {} of the time: that rank's process is held up on the host (rank-0-only "
            "logging, metrics, evaluation, checkpointing, or a slower input pipeline). Move "
            "that work off the critical path (another thread or process, every N steps) or "
            "spread it over every rank.",
            f.peer_gpu.value_or(-1), points_text(100 - f.peer_util.value_or(0))));
        break;
      }
      out.push_back(
          fmt::format("Balance the work: this GPU waits for GPU {}. Give every rank the "
                      "same share (uneven shards, padding, rank-0-only work such as "
                      "logging or evaluation).",
                      f.peer_gpu.value_or(-1)));
      out.push_back(
          "Move rank-0 extras (checkpointing, metrics) off the critical path or onto "
          "every rank.");
      break;
    case GpuState::Busy:
      // Nothing to fix that the counters show: the GPU works. Only what would
      // tell how well, and where its kernel time goes.
      out.push_back(
          "Kernels keep the GPU busy; whether they fill the SMs was not measured. "
          "`gpulens run --kernels` shows which kernels take the time; a GPU with GPM (Hopper or "
          "newer) measures SM and tensor activity.");
      break;
    case GpuState::Unknown:
    case GpuState::Count:
      if (!hw.gpm_missing_reason.empty()) {
        out.push_back(
            "Measure SM activity: run on Hopper or newer with GPM, or use DCGM "
            "profiling metrics, to see whether kernels fill the SMs.");
      }
      break;
  }
  return out;
}

std::vector<std::string> fixes_for_throttle(const ThrottleFinding& t) {
  std::vector<std::string> out;
  if (!t.throttled) return out;
  using namespace clock_reason;
  if (t.reasons & (kSwThermal | kHwThermal)) {
    out.push_back("Cool the GPU: check fans, airflow, inlet temperature and dust.");
  }
  if (t.reasons & (kSwPowerCap | kHwPowerBrake | kHwSlowdown)) {
    out.push_back(
        "Clocks are held down by the power limit: expected under heavy tensor load; "
        "check `nvidia-smi -q -d POWER` that the limit is the default maximum.");
  }
  if (t.reasons & (kHwSlowdown | kHwPowerBrake)) {
    out.push_back(
        "A hardware slowdown or power brake points to the power supply or the "
        "chassis: ask the operator to check them.");
  }
  return out;
}

std::vector<std::string> fixes_for_alert(std::string_view rule, const StateFinding& finding,
                                         const WindowStats& window, const HardwareLimits& hw,
                                         const FixContext& ctx) {
  if (rule == "high_util_low_activity" || rule == "low_efficiency" ||
      rule == "idle_holding_memory") {
    return fixes_for_state(finding, window, hw, ctx);
  }
  if (rule == "stalled") {
    return {
        "Confirm the hang: a kernel spins while nothing progresses, the signature of a hung "
        "collective (NCCL) or a deadlock. Dump the Python stacks of every rank (py-spy dump "
        "--pid PID): ranks stuck in different collectives, or one rank elsewhere, name the "
        "culprit.",
        "Rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=COLL) to log each collective, and set a "
        "process-group timeout (torch.distributed.init_process_group(timeout=...)) with "
        "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 so that a hang becomes an error.",
        "For a custom kernel, attach cuda-gdb -p PID and `info cuda kernels` to see where its "
        "warps wait."};
  }
  if (rule == "memory_growth") {
    return {
        "Look for tensors kept across steps: accumulating the loss without .item() or "
        ".detach(), lists of outputs, caches that never evict.",
        "Compare torch.cuda.memory_allocated() between steps; "
        "torch.cuda.memory._record_memory_history() shows who allocates."};
  }
  if (rule == "gpu_imbalance") {
    return {
        "Give every rank the same work (balanced shards, equal sequence lengths per rank), "
        "and keep rank-0-only work off the critical path."};
  }
  if (rule == "xid_error") {
    return {
        "Check `dmesg` for NVRM lines; XID 13/31/43 usually come from the application, "
        "48/63/64/74/79/92/94/95/119 from the hardware or driver: drain the node and "
        "ask the operator to reset or replace the GPU."};
  }
  if (rule == "gpu_lost") {
    return {
        "The GPU fell off the bus or stopped answering: drain the node; a reset "
        "(nvidia-smi -r) or a reboot is needed, and a repeat means hardware service."};
  }
  return {};
}

}  // namespace gpulens::diagnosis

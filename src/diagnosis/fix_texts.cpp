// SPDX-License-Identifier: Apache-2.0
// The text of each fix of the state table; docs/diagnosis.md ("Fixes") has
// examples and the rules that choose them.
#include "diagnosis/fix_texts.hpp"

#include <algorithm>
#include <cmath>

#include "diagnosis/fix_evidence_text.hpp"
#include "diagnosis/fix_format.hpp"
#include "diagnosis/fix_premises.hpp"
#include "diagnosis/fixes.hpp"

namespace gpulens::diagnosis::fix_text {

using fix_words::fusion_clause;
using fix_words::kernels_clause;
using fix_words::precision_clause;
using fmt_fix::pct;
using fmt_fix::process_label;

namespace {

std::string busy_process(const FixInput& in) {
  const auto& procs = in.window.procs;
  return process_label(procs.top_cpu_name, procs.top_cpu_pid);
}

std::string link_rate(const FixInput& in) {
  const StateFacts& f = in.facts();
  return fmt::format(
      "{}{}", fmt_fix::gbytes_s(f.pcie_mibs.value_or(0)),
      f.pcie_share ? fmt::format(" ({} of the link)", share_text(*f.pcie_share)) : std::string());
}

}  // namespace

std::string release_idle_gpu(const FixInput&) {
  return "Nothing runs: if this GPU is not needed, release it or schedule work on it.";
}

// The job's own memory: ending it is not the advice; freeing what it holds
// between its kernels, or ending it once its GPU work is done, is.
std::string job_holds_memory(const FixInput& in) {
  return fmt::format(
      "Your job holds {} between its kernels without running any: free what it no "
      "longer needs (del the tensors, then torch.cuda.empty_cache()), and release the GPU "
      "once its GPU work is done instead of keeping the process alive.",
      gib_text(in.facts().mem_held_mib.value_or(0)));
}

std::string job_waits_elsewhere(const FixInput&) {
  return "If the job waits on something else (input, a checkpoint upload, another job), "
         "overlap that wait with GPU work or run it before taking the GPU.";
}

std::string process_holds_memory(const FixInput& in) {
  const auto& procs = in.window.procs;
  const auto who = process_label(procs.top_mem_name, procs.top_mem_pid);
  const std::string cost = cost_per_hour_text(in.ctx);
  return fmt::format(
             "{} holds {} without running kernels: end it or free the "
             "GPU (a notebook kernel left open, a finished job still alive)",
             procs.known ? who : "A process", gib_text(in.facts().mem_held_mib.value_or(0))) +
         (cost.empty() ? "." : "; an idle GPU costs " + cost + ".");
}

std::string free_cached_memory(const FixInput&) {
  return "In PyTorch, torch.cuda.empty_cache() returns cached blocks; deleting the "
         "model and the optimizer releases the rest.";
}

// The tensor cores already do the math: precision advice would tell the job
// what it does. What is left is doing less work per result.
std::string math_on_tensor_cores(const FixInput& in) {
  return fmt::format(
             "The SMs are busy and the tensor pipes work ({}): the math already runs on tensor "
             "cores. Gains now come from less work per step: fused kernels (torch.compile, "
             "FlashAttention), fewer recomputations, a larger batch per launch.",
             pct(std::max(tensor_pipes(in.window).floating.value_or(0),
                          in.facts().tensor_active.value_or(0)))) +
         kernels_clause(in);
}

// An int8 GEMM: narrower floats would widen it. No float type is named, so
// that the verdict's precision filter (verdict::advises_precision) keeps it.
std::string math_on_integer_tensor(const FixInput& in) {
  return fmt::format(
             "The SMs are busy and the integer tensor pipes work (IMMA {}): the math already "
             "runs on integer tensor cores (int8), narrower than any floating-point type would "
             "make it. Gains now come from less work per step: dequantisation and activations "
             "fused into the GEMM, fewer passes, a larger batch per launch.",
             pct(tensor_pipes(in.window).integer)) +
         kernels_clause(in);
}

// Integer math: tensor cores and narrower floats have nothing to take over.
std::string integer_work(const FixInput& in) {
  const StateFacts& f = in.facts();
  return fmt::format(
      "The SMs are busy on integer work (integer pipe {}, the tensor and FP pipes under "
      "{}): lower-precision floating point cannot speed it up. Gains come from doing less "
      "of it: a cheaper hash or index computation, fewer passes over the data, work "
      "skipped or cached.",
      pct(f.int_active), pct(f.float_pipes));
}

// Resident warps that compute nothing are waiting, not computing.
std::string warps_wait(const FixInput& in) {
  const StateFacts& f = in.facts();
  return fmt::format(
      "The SMs are resident but no math pipe works (busiest tensor/FP pipe {}{}): the "
      "warps wait on something (memory latency, a lock or flag, atomics) rather than "
      "compute, so lower precision would not help. Profile one kernel (ncu --section "
      "WarpStateStats) to see what they wait on.",
      pct(f.float_pipes),
      f.int_active ? fmt::format(", integer pipe {}", pct(f.int_active)) : std::string());
}

// The FP32 pipe works and no tensor pipe does: FP32 math on CUDA cores, which
// bf16/fp16 or TF32 moves to the tensor cores.
std::string use_tensor_cores(const FixInput& in) {
  const StateFacts& f = in.facts();
  return fmt::format(
             "Tensor pipes are mostly idle ({}) while the FP pipes work ({}): the math runs on "
             "CUDA cores. Use bf16/fp16 autocast or TF32 (torch.backends.cuda.matmul.allow_tf32 "
             "= True) so the tensor cores do it.",
             pct(f.tensor_active), pct(f.float_pipes)) +
         kernels_clause(in);
}

// FP16 or FP64 math on CUDA cores: nothing for autocast to narrow, but matrix
// products can still move to the tensor cores.
std::string other_float_on_cores(const FixInput& in) {
  const auto fp16 = in.window.get(Metric::Fp16Active).value_or(0);
  const auto fp64 = in.window.get(Metric::Fp64Active).value_or(0);
  const bool half = fp16 >= fp64;
  return fmt::format(
             "Tensor pipes are mostly idle ({}) while the {} pipe works ({}): the math runs on "
             "CUDA cores in {}, not in FP32. Matrix products in it can move to the tensor cores "
             "({}); fused kernels (torch.compile) cut the rest.",
             pct(in.facts().tensor_active), half ? "FP16" : "FP64", pct(half ? fp16 : fp64),
             half ? "half precision" : "double precision",
             half ? "half-precision GEMMs through cuBLAS or torch.matmul"
                  : "Hopper's FP64 tensor cores, through cuBLAS's double-precision routines") +
         kernels_clause(in);
}

std::string then_fuse(const FixInput&) {
  return "Then fuse kernels (torch.compile) to cut the work itself.";
}

std::string pipes_not_measured(const FixInput&) {
  return "The SMs are busy; which pipes do the math was not measured (GPM on Hopper or "
         "newer, or DCGM profiling metrics, would say). If it runs in FP32 on CUDA cores, "
         "mixed precision (bf16/fp16) moves it to the tensor cores; fused kernels "
         "(torch.compile) cut work either way.";
}

std::string scattered_access(const FixInput&) {
  return "The warps wait on scattered memory access, not on math: make accesses contiguous "
         "(sort or bucket the indices, gather fewer and larger rows), keep hot rows in cache "
         "or shared memory, and store the table narrower (bf16, fp8) to move fewer bytes.";
}

// The memory controller's busy time is not bandwidth: the advice holds only
// if DRAM is the limit, which GPM would measure.
std::string controller_busy(const FixInput& in) {
  return fmt::format(
      "The memory controller is busy {} of the time; whether DRAM bandwidth is the limit "
      "was not measured (GPM's DRAM activity, Hopper or newer, would say). If it is, move "
      "fewer bytes: fused kernels (FlashAttention, torch.compile, fused optimizers) keep "
      "data in registers and shared memory.",
      pct(in.facts().mem_util));
}

// DRAM is the limit: only fewer bytes help. Which bytes the evidence leaves
// open: a narrower type where the data is not narrow already, fusion where
// element-wise kernels follow one another (docs/diagnosis.md).
std::string move_fewer_bytes(const FixInput& in) {
  const double share = in.facts().dram_share.value_or(0);
  std::string out =
      share >= kDramAtPeakShare
          ? fmt::format(
                "DRAM already runs at its practical peak ({} of it): only fewer bytes help.",
                share_text(share))
          // Short of the line reads short of it: 0.895 is 89 %, not 90 %.
          : fmt::format("DRAM runs at {} of its practical peak: fewer bytes are the lever.",
                        points_text(std::min(std::round(share * 100), kDramAtPeakShare * 100 - 1)));
  return out + precision_clause(in) + fusion_clause(in) + kernels_clause(in);
}

std::string larger_batches_for_weights(const FixInput&) {
  return "Larger batches raise arithmetic intensity when the weights dominate traffic.";
}

std::string overlap_communication(const FixInput&) {
  return "Overlap communication with compute: DDP gradient bucketing "
         "(bucket_cap_mb), FSDP prefetch, or larger micro-batches per all-reduce.";
}

std::string send_fewer_bytes(const FixInput&) {
  return "Send fewer bytes: bf16 gradient all-reduce or gradient compression (PowerSGD).";
}

std::string check_topology(const FixInput&) {
  return "Check the topology with `nvidia-smi topo -m`: traffic should use NVLink, "
         "not PCIe or the CPU interconnect.";
}

std::string staged_copies(const FixInput& in) {
  return host_limited_copies_fix(in.facts(), in.window);
}

std::string keep_data_on_gpu(const FixInput&) {
  return "Keep data on the GPU between steps; copy once, not every iteration.";
}

// At the rate pinned copies reach, pinning is done: fewer or overlapped copies.
std::string copies_at_link_rate(const FixInput& in) {
  const std::string pinned = fix_words::pinned_rate(in);
  return fmt::format(
      "Copies run at {}{}: not the pageable rate, so pinning is done, and only fewer or "
      "overlapped copies help. Keep data on the GPU between steps (copy once, not every "
      "iteration) and overlap the copies that remain with compute on a separate CUDA stream.",
      link_rate(in),
      pinned.empty() ? std::string() : ", against about " + pinned + " for pinned copies");
}

std::string small_pinned_copies(const FixInput& in) {
  return fmt::format(
      "The kernel view's copies all come from pinned memory, yet they run at {}: many small "
      "copies, each paying its setup. Batch them into fewer, larger copies, or keep the data "
      "on the GPU.",
      link_rate(in));
}

// Below half the pinned rate: pageable memory is one cause of several; the
// kernel view, where there is one, says which memory the copies came from.
std::string use_pinned_memory(const FixInput& in) {
  const std::string pinned = fix_words::pinned_rate(in);
  const std::string reach =
      pinned.empty() ? std::string() : "; pinned copies reach about " + pinned + " on this link";
  if (copies_known_pageable(in)) {
    return fmt::format(
        "The kernel view saw copies from pageable host memory, at {}: pin the host buffers "
        "(DataLoader pin_memory=True, tensor.pin_memory()) and copy with non_blocking=True{}.",
        link_rate(in), reach);
  }
  return fmt::format(
      "Copies run at {}{}: if the host buffers are pageable, use pinned host memory (DataLoader "
      "pin_memory=True, tensor.pin_memory()) with non_blocking=True copies; `gpulens run "
      "--kernels` says which memory they came from.",
      link_rate(in), pinned.empty() ? std::string() : ", under half of what pinned copies reach");
}

std::string batch_transfers(const FixInput&) {
  return "Batch transfers into fewer, larger copies and overlap them with compute "
         "on a separate CUDA stream.";
}

std::string gpu_waits_for_process(const FixInput& in) {
  return fmt::format(
      "The GPU waits for its process (pid {}), busy on the CPU ({} of a core) with no "
      "kernel running: its GPU work waits for CPU work (tokenizing, compiling, "
      "preprocessing, evaluation on the CPU). Do that work before taking the GPU, in "
      "parallel worker processes, or overlapped with GPU work; cache what can be cached "
      "(tokenized data, compiled kernels).",
      in.window.procs.top_cpu_pid, points_text(in.facts().process_cpu_pct.value_or(0)));
}

// Where the counters cannot tell a synchronising loop from one that works or only
// launches: what would tell them apart for this job.
std::string how_syncs_are_told(const FixInput& in) {
  if (in.ctx.kernels && !in.ctx.kernels->syncs_recorded) {
    return "This job's kernel view cannot tell them apart: it recorded no CUDA "
           "synchronisations, because the job carries PyTorch's profiler (see its notes); "
           "`gpulens run --kernels --kernels-syncs` records them, for a job that does not "
           "start torch.profiler itself.";
  }
  return "`gpulens run --kernels` counts the synchronisations and tells them apart.";
}

// The GPU waits on the host. Which host work it is, the counters tell only in
// part: a process at a full core either synchronises every step (CUDA's wait
// spins) or does the work itself, and only a trace tells which.
std::string process_at_full_core(const FixInput& in) {
  const auto& procs = in.window.procs;
  return fmt::format(
      "{} keeps a CPU core busy ({}) while the GPU waits. Two causes look alike in the "
      "counters: it synchronises every step (.item(), .cpu(), printing a loss, "
      "torch.cuda.synchronize(): the wait spins a core until the GPU drains), or it does the "
      "work itself (Python preprocessing in the loop, a DataLoader with num_workers=0). {}",
      process_label(procs.top_cpu_name, procs.top_cpu_pid),
      points_text(in.facts().process_cpu_pct.value_or(0)), how_syncs_are_told(in));
}

// The kernel view counts the synchronisations: the core spins in CUDA's wait.
std::string synchronises_every_step(const FixInput& in) {
  return fmt::format(
      "{} keeps a CPU core busy ({}) while the GPU waits, and it synchronises: the kernel view "
      "counts {}. Each is a .item(), .cpu(), a printed loss or torch.cuda.synchronize() that "
      "waits for the GPU to drain: read values every N steps, keep running metrics on the GPU "
      "(accumulate a tensor, not a Python float) and log asynchronously.",
      busy_process(in), points_text(in.facts().process_cpu_pct.value_or(0)),
      fix_words::sync_figures(in));
}

// The kernel view counts few synchronisations: the core does the work itself.
std::string does_the_work(const FixInput& in) {
  return fmt::format(
      "{} keeps a CPU core busy ({}) while the GPU waits, with few synchronisations (the kernel "
      "view counts {}): it does the work itself (Python preprocessing in the loop, a DataLoader "
      "with num_workers=0). Move that work into DataLoader workers (num_workers > 0) or onto "
      "the GPU.",
      busy_process(in), points_text(in.facts().process_cpu_pct.value_or(0)),
      fix_words::sync_figures(in));
}

std::string sync_or_preprocess(const FixInput&) {
  return "If it synchronises: read values every N steps, keep running metrics on the GPU "
         "(accumulate a tensor, not a Python float) and log asynchronously. If it preprocesses: "
         "move the work into DataLoader workers (num_workers > 0) or onto the GPU.";
}

// A process that waits (little CPU) waits on something outside itself, most
// often input.
std::string process_waits_on_input(const FixInput& in) {
  const auto& procs = in.window.procs;
  return fmt::format(
      "{} mostly waits ({} of a core) while its GPU idles: it waits on something outside "
      "itself, most often input (DataLoader workers, storage, the network). Feed the GPU "
      "faster: more DataLoader workers (num_workers), persistent_workers=True, "
      "prefetch_factor >= 2, cheaper transforms or GPU-side decoding (NVIDIA DALI).",
      process_label(procs.top_cpu_name, procs.top_cpu_pid),
      points_text(in.facts().process_cpu_pct.value_or(0)));
}

std::string host_wait_unknown(const FixInput& in) {
  return "The GPU waits on the host; without per-process CPU figures the cause cannot be told: "
         "input (DataLoader num_workers), per-step synchronisation (.item(), .cpu()) or host "
         "work in the loop. " +
         how_syncs_are_told(in);
}

std::string pin_and_prefetch(const FixInput&) {
  return "pin_memory=True and non_blocking copies; prefetch the next batch while this one "
         "computes.";
}

// A loop that synchronises after every op and one that only launches look
// alike in the counters: short kernels, the SMs mostly idle, a core busy
// (CUDA's wait spins it). Only a trace's synchronisations tell them apart.
std::string launch_or_sync(const FixInput& in) {
  const auto& procs = in.window.procs;
  return fmt::format(
      "{} keeps a CPU core busy ({}) feeding kernels of a few microseconds. Two causes "
      "look alike in the counters: launch overhead (each launch costs the host more than "
      "the kernel runs: launch fewer, bigger kernels with fusion, torch.compile, CUDA "
      "Graphs or larger batches) or a synchronisation after every op (.item(), .cpu(), "
      "torch.cuda.synchronize(): each kernel waits for the host's round trip; read values "
      "every N steps instead). {}",
      process_label(procs.top_cpu_name, procs.top_cpu_pid),
      points_text(in.facts().process_cpu_pct.value_or(0)), how_syncs_are_told(in));
}

std::string sync_after_every_op(const FixInput& in) {
  return fmt::format(
      "{} keeps a CPU core busy ({}) feeding kernels of a few microseconds, and it synchronises "
      "after them: the kernel view counts {}. Each kernel waits for the host's round trip: take "
      ".item(), .cpu() and torch.cuda.synchronize() out of the loop and read values every N "
      "steps.",
      busy_process(in), points_text(in.facts().process_cpu_pct.value_or(0)),
      fix_words::sync_figures(in));
}

std::string launch_overhead(const FixInput& in) {
  return fmt::format(
      "{} keeps a CPU core busy ({}) feeding kernels of a few microseconds, with few "
      "synchronisations (the kernel view counts {}): each launch costs the host more than the "
      "kernel runs. Launch fewer, bigger kernels: fusion, torch.compile, CUDA Graphs or larger "
      "batches.",
      busy_process(in), points_text(in.facts().process_cpu_pct.value_or(0)),
      fix_words::sync_figures(in));
}

std::string more_work_per_launch(const FixInput&) {
  return "Give each launch more work: larger batches, fewer and bigger kernels.";
}

std::string cut_launch_overhead(const FixInput&) {
  return "Cut launch overhead with CUDA Graphs or "
         "torch.compile(mode=\"reduce-overhead\").";
}

std::string fuse_elementwise(const FixInput&) {
  return "Fuse element-wise operations (torch.compile, custom fused kernels).";
}

std::string launch_more_blocks(const FixInput& in) {
  const auto sms = fmt_fix::sms_busy(in.facts(), in.hw);
  return fmt::format(
      "{} busy: launch more blocks per kernel (at least one per SM, "
      "ideally several waves) or use a larger batch.",
      sms.empty() ? "Few SMs are" : sms);
}

std::string share_or_right_size(const FixInput&) {
  return "If the work cannot grow, run several streams or processes side by side "
         "(MPS), or right-size the GPU (a MIG slice or a smaller GPU).";
}

std::string slower_rank(const FixInput& in) {
  const StateFacts& f = in.facts();
  return fmt::format(
      "This GPU waits in collectives for GPU {}, which does the same work with its GPU "
      "idle {} of the time: that rank's process is held up on the host (rank-0-only "
      "logging, metrics, evaluation, checkpointing, or a slower input pipeline). Move "
      "that work off the critical path (another thread or process, every N steps) or "
      "spread it over every rank.",
      f.peer_gpu.value_or(-1), points_text(100 - f.peer_util.value_or(0)));
}

std::string balance_ranks(const FixInput& in) {
  return fmt::format(
      "Balance the work: this GPU waits for GPU {}. Give every rank the "
      "same share (uneven shards, padding, rank-0-only work such as "
      "logging or evaluation).",
      in.facts().peer_gpu.value_or(-1));
}

std::string rank0_extras(const FixInput&) {
  return "Move rank-0 extras (checkpointing, metrics) off the critical path or onto "
         "every rank.";
}

// Nothing to fix that the counters show: the GPU works. Only what would tell
// how well, and where its kernel time goes.
std::string measure_busy_kernels(const FixInput&) {
  return "Kernels keep the GPU busy; whether they fill the SMs was not measured. "
         "`gpulens run --kernels` shows which kernels take the time; a GPU with GPM (Hopper or "
         "newer) measures SM and tensor activity.";
}

std::string measure_sm_activity(const FixInput&) {
  return "Measure SM activity: run on Hopper or newer with GPM, or use DCGM "
         "profiling metrics, to see whether kernels fill the SMs.";
}

}  // namespace gpulens::diagnosis::fix_text

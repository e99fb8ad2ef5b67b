// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/fix_evidence_text.hpp"

#include <algorithm>

#include "diagnosis/fix_format.hpp"
#include "diagnosis/fix_premises.hpp"

namespace gpulens::diagnosis::fix_words {
namespace {

// The kernel view's kernels named in a fix: enough to recognise the job's own.
constexpr std::size_t kKernelsNamed = 3;

std::string kernel_item(const KernelEvidence::Kernel& k) {
  return fmt::format("`{}` {}{}", k.name, share_text(k.share),
                     k.dtype.empty() ? std::string() : " (" + k.dtype + ")");
}

std::string pipe(Metric m, const WindowStats& w) {
  return fmt_fix::pct(w.get(m));
}

// What says the data is 16 bits or narrower, or fp32, in words.
std::string width_evidence(const FixInput& in, DataWidth width) {
  if (in.ctx.kernels && !in.ctx.kernels->top.empty()) {
    std::string out;
    std::size_t named = 0;
    for (const auto& k : in.ctx.kernels->top) {
      if (k.dtype.empty() || named == kKernelsNamed) continue;
      out += (named++ == 0 ? "" : ", ") + kernel_item(k);
    }
    if (!out.empty()) return "the kernels: " + out;
  }
  if (width == DataWidth::Half) {
    const auto fp16 = in.window.get(Metric::Fp16Active);
    if (fp16 && *fp16 >= kPipeAtWorkPct)
      return "the FP16 pipe works, " + pipe(Metric::Fp16Active, in.window);
    return "the tensor pipes work, " + fmt_fix::pct(tensor_pipes(in.window).floating);
  }
  return fmt::format("the FP32 pipe works, {}, with the FP16 and tensor pipes idle",
                     pipe(Metric::Fp32Active, in.window));
}

}  // namespace

std::string kernels_clause(const FixInput& in) {
  if (!in.ctx.kernels || in.ctx.kernels->top.empty()) return {};
  std::string out;
  std::size_t named = 0;
  for (const auto& k : in.ctx.kernels->top) {
    if (named == kKernelsNamed) break;
    out += (named++ == 0 ? "" : ", ") + kernel_item(k);
  }
  return " The kernel view: " + out + ".";
}

std::string precision_clause(const FixInput& in) {
  const DataWidth width = data_width(in);
  switch (width) {
    case DataWidth::Half:
      return " Precision is not the lever: the data is already 16-bit or narrower (" +
             width_evidence(in, width) + ").";
    case DataWidth::Fp32:
      // PyTorch computes bf16 element-wise math in fp32 registers too, so the
      // FP32 pipe alone says "likely"; the kernels' types say it outright.
      return in.ctx.kernels && !in.ctx.kernels->top.empty()
                 ? " The data is fp32 (" + width_evidence(in, width) +
                       "): bf16 (mixed precision) halves its bytes."
                 : " The math runs in FP32 (" + width_evidence(in, width) +
                       "), so the tensors are likely fp32: bf16 (mixed precision) halves their "
                       "bytes.";
    case DataWidth::Unknown:
      break;
  }
  return " If the tensors are fp32, bf16 (mixed precision) halves their bytes.";
}

std::string fusion_clause(const FixInput& in) {
  if (in.ctx.kernels && !in.ctx.kernels->top.empty()) {
    const KernelEvidence& k = *in.ctx.kernels;
    const bool several =
        k.elementwise_per_step ? *k.elementwise_per_step >= 2 : k.elementwise_kernels >= 2;
    if (!several) return " The kernel view shows no chain of element-wise kernels to fuse.";
    std::string names;
    std::size_t named = 0;
    for (const auto& e : k.top) {
      if (!e.elementwise || named == kKernelsNamed) continue;
      names += fmt::format("{}`{}`", named++ == 0 ? "" : ", ", e.name);
    }
    return fmt::format(
        " Fuse the element-wise kernels ({}{}) into one pass (torch.compile, fused "
        "optimizers), so the intermediates stay in registers.",
        k.elementwise_per_step ? fmt::format("{:.0f} per step: ", *k.elementwise_per_step)
                               : std::string(),
        names);
  }
  return " If each step runs several element-wise kernels back to back, fused kernels "
         "(torch.compile, FlashAttention, fused optimizers) keep the intermediates in "
         "registers; `gpulens run --kernels` shows whether it does.";
}

std::string sync_figures(const FixInput& in) {
  if (!in.ctx.kernels) return {};
  const KernelEvidence& k = *in.ctx.kernels;
  if (k.syncs_per_step) {
    return fmt::format(
        "{:.1f} CUDA synchronisations per step, the host blocked {:.1f} ms per step "
        "in them",
        *k.syncs_per_step, k.sync_s_per_step.value_or(0) * 1e3);
  }
  const std::string per_launch = k.syncs_per_launch
                                     ? fmt::format(" (one per {:.1f} kernel launches)",
                                                   1.0 / std::max(*k.syncs_per_launch, 1e-9))
                                     : std::string();
  return fmt::format("{} CUDA synchronisations{}, the host blocked in them {} of the traced time",
                     k.syncs, per_launch, share_text(k.sync_share.value_or(0)));
}

std::string pinned_rate(const FixInput& in) {
  if (!in.hw.pcie_mibs) return {};
  return fmt_fix::gbytes_s(*in.hw.pcie_mibs * kPinnedLinkShare);
}

}  // namespace gpulens::diagnosis::fix_words

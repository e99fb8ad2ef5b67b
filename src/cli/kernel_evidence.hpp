// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel view of `gpulens run --kernels` as the evidence the diagnosis's
// fixes can name (diagnosis/kernel_evidence.hpp): the kernels that take the
// time with the types their names carry, synchronisations, which host memory
// the copies came from. Here because only the commands have both the view and
// the verdict's options.
#include <string>
#include <string_view>

#include "diagnosis/kernel_evidence.hpp"
#include "kernels/view/analysis.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::cli {

// The narrowest type a kernel's name carries ("bf16" for
// "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn": the wider ones are accumulators),
// "" when it carries none. One of fp8, int8, bf16, fp16, tf32, fp32, fp64.
std::string kernel_dtype(std::string_view demangled);
// PyTorch's eager element-wise and reduction kernels, by name.
bool elementwise_kernel(std::string_view demangled);

diagnosis::KernelEvidence kernel_evidence(const kernels::KernelView& view);

// What a recording's kernel view adds to the verdict: its collectives, that it
// exists (evidence gaps point at it), and the evidence the fixes name.
void apply_kernel_view(verdict::VerdictOptions& options, const kernels::KernelView& view);

}  // namespace gpulens::cli

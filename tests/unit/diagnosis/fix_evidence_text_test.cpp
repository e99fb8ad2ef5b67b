// SPDX-License-Identifier: Apache-2.0
// The clauses that name a fix's evidence (fix_evidence_text.cpp): each is ""
// or an "if" sentence without a kernel view, and names kernels with one.
#include "diagnosis/fix_evidence_text.hpp"

#include <gtest/gtest.h>

#include <string>

#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

// What one fix clause is built from; the kernel view is optional.
struct ClauseCase {
  StateFinding finding;
  WindowStats window;
  HardwareLimits hw = hardware_limits(testing::h100());
  FixContext ctx;
  FixInput input() const { return FixInput{finding, window, hw, ctx}; }
};

KernelEvidence::Kernel view_kernel(std::string name, double share, std::string dtype,
                                   bool elementwise = false) {
  KernelEvidence::Kernel k;
  k.name = std::move(name);
  k.share = share;
  k.dtype = std::move(dtype);
  k.elementwise = elementwise;
  return k;
}

TEST(FixEvidenceText, KernelsClauseNamesAtMostThreeKernels) {
  ClauseCase c;
  EXPECT_EQ(fix_words::kernels_clause(c.input()), "");
  c.ctx.kernels = KernelEvidence{};
  EXPECT_EQ(fix_words::kernels_clause(c.input()), "");
  c.ctx.kernels->top = {view_kernel("softmax_kernel", 0.45, "fp32"), view_kernel("gemm", 0.3, ""),
                        view_kernel("copy", 0.1, "bf16"), view_kernel("fourth", 0.05, "fp32")};
  EXPECT_EQ(fix_words::kernels_clause(c.input()),
            " The kernel view: `softmax_kernel` 45 % (fp32), `gemm` 30 %, `copy` 10 % (bf16).");
}

TEST(FixEvidenceText, PrecisionClauseFollowsTheDataWidth) {
  ClauseCase c;
  EXPECT_EQ(fix_words::precision_clause(c.input()),
            " If the tensors are fp32, bf16 (mixed precision) halves their bytes.");
  c.ctx.kernels = KernelEvidence{};
  c.ctx.kernels->top = {view_kernel("add_kernel", 0.5, "fp32")};
  EXPECT_EQ(fix_words::precision_clause(c.input()),
            " The data is fp32 (the kernels: `add_kernel` 50 % (fp32)): bf16 (mixed precision) "
            "halves its bytes.");
  c.ctx.kernels->top = {view_kernel("add_kernel", 0.5, "bf16")};
  EXPECT_EQ(fix_words::precision_clause(c.input()),
            " Precision is not the lever: the data is already 16-bit or narrower (the kernels: "
            "`add_kernel` 50 % (bf16)).");
}

TEST(FixEvidenceText, FusionClauseNamesTheElementWiseKernels) {
  ClauseCase c;
  EXPECT_NE(fix_words::fusion_clause(c.input()).find("If each step runs several"),
            std::string::npos);
  c.ctx.kernels = KernelEvidence{};
  c.ctx.kernels->top = {view_kernel("gemm", 0.6, "bf16"), view_kernel("add", 0.2, "bf16", true),
                        view_kernel("mul", 0.1, "bf16", true)};
  c.ctx.kernels->elementwise_kernels = 1;
  EXPECT_EQ(fix_words::fusion_clause(c.input()),
            " The kernel view shows no chain of element-wise kernels to fuse.");
  c.ctx.kernels->elementwise_per_step = 12;
  const auto fuse = fix_words::fusion_clause(c.input());
  EXPECT_NE(fuse.find("(12 per step: `add`, `mul`)"), std::string::npos) << fuse;
}

TEST(FixEvidenceText, SyncFiguresPerStepOrOverTheTracedTime) {
  ClauseCase c;
  EXPECT_EQ(fix_words::sync_figures(c.input()), "");
  c.ctx.kernels = KernelEvidence{};
  c.ctx.kernels->syncs = 40;
  c.ctx.kernels->sync_share = 0.25;
  c.ctx.kernels->syncs_per_launch = 0.5;
  EXPECT_EQ(fix_words::sync_figures(c.input()),
            "40 CUDA synchronisations (one per 2.0 kernel launches), the host blocked in them "
            "25 % of the traced time");
  c.ctx.kernels->syncs_per_step = 8;
  c.ctx.kernels->sync_s_per_step = 0.0032;
  EXPECT_EQ(fix_words::sync_figures(c.input()),
            "8.0 CUDA synchronisations per step, the host blocked 3.2 ms per step in them");
}

TEST(FixEvidenceText, PinnedRateNeedsTheLinksRate) {
  ClauseCase c;
  c.hw.pcie_mibs.reset();
  EXPECT_EQ(fix_words::pinned_rate(c.input()), "");
  c.hw.pcie_mibs = 100 * kMibPerGb;  // 100 GB/s per direction
  EXPECT_EQ(fix_words::pinned_rate(c.input()), "87.0 GB/s");
}

}  // namespace
}  // namespace gpulens::diagnosis

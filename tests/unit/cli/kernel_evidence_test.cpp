// SPDX-License-Identifier: Apache-2.0
// The kernel view as the evidence the diagnosis's fixes name
// (src/cli/kernel_evidence.cpp): types from kernel names, element-wise kernels,
// synchronisations per step, and which host memory the copies came from.
#include "cli/kernel_evidence.hpp"

#include <gtest/gtest.h>

namespace gpulens::cli {
namespace {

TEST(KernelEvidence, TheNarrowestTypeAKernelsNameCarries) {
  EXPECT_EQ(kernel_dtype("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"), "bf16");
  EXPECT_EQ(kernel_dtype("ampere_sgemm_128x64_nn"), "fp32");
  EXPECT_EQ(kernel_dtype("cutlass_80_tensorop_s1688tf32gemm_256x128_16x3_nn_align4"), "tf32");
  EXPECT_EQ(kernel_dtype("void at::native::vectorized_elementwise_kernel<4, "
                         "at::native::CUDAFunctor_add<c10::Half>, ...>(int, ...)"),
            "fp16");
  EXPECT_EQ(kernel_dtype("void at::native::reduce_kernel<512, 1, ReduceOp<float, ...>>()"), "fp32");
  EXPECT_EQ(kernel_dtype("sm90_xmma_gemm_s8s8_s32_imma_tn"), "int8");
  EXPECT_EQ(kernel_dtype("sm90_xmma_gemm_e4m3e4m3_bf16_f32_tn"), "fp8");
  EXPECT_EQ(kernel_dtype("volta_dgemm_64x64_nn"), "fp64");
  EXPECT_EQ(kernel_dtype("int_hash_all"), "");
}

TEST(KernelEvidence, ElementWiseKernelsByName) {
  EXPECT_TRUE(elementwise_kernel("void at::native::vectorized_elementwise_kernel<4, ...>()"));
  EXPECT_TRUE(elementwise_kernel("void at::native::reduce_kernel<512, 1, ...>()"));
  EXPECT_FALSE(elementwise_kernel("ampere_sgemm_128x64_nn"));
}

kernels::KernelView view_with_steps() {
  kernels::KernelView v;
  v.available = true;
  kernels::KernelRow ew;
  ew.name = "void at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>()";
  ew.short_name = "vectorized_elementwise_kernel";
  ew.count = 300;
  ew.share = 0.6;
  kernels::KernelRow nccl;
  nccl.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  nccl.short_name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
  nccl.collective = true;
  nccl.share = 0.3;
  kernels::KernelRow gemm;
  gemm.name = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn";
  gemm.short_name = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn";
  gemm.count = 100;
  gemm.share = 0.1;
  v.top = {ew, nccl, gemm};
  kernels::DeviceView d;
  kernels::StepStats steps;
  steps.steps = 100;
  steps.syncs_per_step = 8;
  steps.sync_s_per_step = 0.003;
  d.steps = steps;
  d.activity.window_s = 10;
  v.devices.push_back(d);
  v.syncs = 800;
  v.sync_s = 0.3;
  kernels::CopyRow pinned;
  pinned.kind = "HtoD";
  pinned.src = "pinned";
  pinned.dst = "device";
  pinned.bytes = 256u << 20;
  v.copies.push_back(pinned);
  return v;
}

TEST(KernelEvidence, FromAViewWithMarkedSteps) {
  const auto e = kernel_evidence(view_with_steps());
  ASSERT_EQ(e.top.size(), 2u);  // the collective is the kernel view's own finding
  EXPECT_EQ(e.top[0].name, "vectorized_elementwise_kernel");
  EXPECT_EQ(e.top[0].dtype, "fp32");
  EXPECT_TRUE(e.top[0].elementwise);
  EXPECT_EQ(e.top[1].dtype, "bf16");
  EXPECT_EQ(e.elementwise_kernels, 1u);
  EXPECT_EQ(e.elementwise_per_step, 3.0);
  EXPECT_EQ(e.syncs_per_step, 8.0);
  EXPECT_EQ(e.sync_s_per_step, 0.003);
  ASSERT_TRUE(e.sync_share);
  EXPECT_NEAR(*e.sync_share, 0.03, 1e-12);
  EXPECT_TRUE(e.pinned_copies);
  EXPECT_FALSE(e.pageable_copies);
}

TEST(KernelEvidence, ASampledViewGivesNoLaunchesPerStep) {
  auto v = view_with_steps();
  v.sampling.sampled = true;
  v.sampling.traced_s = 6;
  v.copies.front().pageable = true;
  const auto e = kernel_evidence(v);
  EXPECT_FALSE(e.elementwise_per_step);
  EXPECT_NEAR(*e.sync_share, 0.05, 1e-12);
  EXPECT_TRUE(e.pageable_copies);
}

TEST(KernelEvidence, SynchronisationsNotRecordedAreUnknownNotZero) {
  // A process that withheld CUPTI's synchronisation records (its job carries a
  // profiler): the advice must not read "the host never synchronises".
  auto v = view_with_steps();
  v.syncs_recorded = false;
  v.syncs = 0;
  v.sync_s = 0;
  const auto e = kernel_evidence(v);
  EXPECT_FALSE(e.syncs_per_step);
  EXPECT_FALSE(e.sync_s_per_step);
  EXPECT_FALSE(e.syncs_per_launch);
  EXPECT_FALSE(e.sync_share);
  EXPECT_EQ(e.elementwise_per_step, 3.0);  // the rest of the view stays
}

TEST(KernelEvidence, InstancesOfOneKernelAreNamedOnceWithTheirTimeSummed) {
  // Eager fp32 x * 2 + 1, relu, * 3, - x: four instances of PyTorch's
  // vectorized_elementwise_kernel, each with its own functor.
  auto v = view_with_steps();
  kernels::KernelRow mul = v.top.front();
  mul.name = "void at::native::vectorized_elementwise_kernel<4, MulFunctor<float>>()";
  mul.share = 0.2;
  mul.count = 300;
  v.top.insert(v.top.begin() + 1, mul);
  v.launches = 1600;
  const auto e = kernel_evidence(v);
  ASSERT_EQ(e.top.size(), 2u);
  EXPECT_EQ(e.top[0].name, "vectorized_elementwise_kernel");
  EXPECT_NEAR(e.top[0].share, 0.8, 1e-12);
  EXPECT_EQ(e.elementwise_kernels, 2u);  // distinct kernels: both instances
  ASSERT_TRUE(e.syncs_per_launch);
  EXPECT_NEAR(*e.syncs_per_launch, 0.5, 1e-12);
}

TEST(KernelEvidence, TheVerdictsOptionsCarryIt) {
  verdict::VerdictOptions o;
  apply_kernel_view(o, view_with_steps());
  EXPECT_TRUE(o.kernel_view);
  ASSERT_TRUE(o.diagnosis.kernels);
  EXPECT_EQ(o.diagnosis.kernels->syncs_per_step, 8.0);
  verdict::VerdictOptions none;
  kernels::KernelView empty;
  apply_kernel_view(none, empty);
  EXPECT_FALSE(none.diagnosis.kernels);
}

}  // namespace
}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
// What a kernel's demangled name says: its short name, and which kernels are
// collectives, on names as CUPTI gives them (NCCL's of several releases, MSCCL's,
// NVSHMEM's, vLLM's custom all-reduce and PyTorch's symmetric-memory kernels), and
// user kernels that only look like them.
#include "kernels/record/kernel_names.hpp"

#include <gtest/gtest.h>

namespace gpulens::kernels {
namespace {

TEST(KernelsNames, ShortNamesDropTemplatesNamespacesAndParameters) {
  EXPECT_EQ(
      short_kernel_name("void at::native::(anonymous namespace)::softmax_kernel<float, 4>(float*, "
                        "int)"),
      "softmax_kernel");
  EXPECT_EQ(short_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"),
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
  EXPECT_EQ(short_kernel_name("void cutlass::Kernel2<cutlass_80_wmma<int>>(Params)"), "Kernel2");
}

TEST(KernelsCollectives, NcclKernelsOfEachReleaseAreNccl) {
  // NCCL 2.19+ (one kernel per collective, op, type, algorithm and protocol).
  auto k = classify_collective(
      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->library, CollectiveLibrary::Nccl);
  EXPECT_EQ(k->operation, "AllReduce");
  k = classify_collective(
      "void ncclDevKernel_ReduceScatter_Sum_f32_RING_SIMPLE(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->operation, "ReduceScatter");  // not "Reduce"
  k = classify_collective("ncclDevKernel_Generic(ncclDevComm*, channelMasks, ncclWork*)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->operation, "");  // the generic kernel does not say which
  // NCCL 2.8-2.18.
  k = classify_collective("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->operation, "AllGather");
  // NCCL 2.4: coll##Kernel_##op##_##dtype.
  k = classify_collective("ncclSendRecvKernel_copy_i8(CollectiveArgs)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->operation, "SendRecv");
  EXPECT_EQ(collective_library_name(k->library), "NCCL");
}

TEST(KernelsCollectives, OtherCommunicationLibrariesAreCollectives) {
  auto k = classify_collective(
      "mscclKernel_Sum_half_Simple_false(ncclDevComm*, mscclAlgo*, mscclWork*)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->library, CollectiveLibrary::Msccl);
  k = classify_collective(
      "void nvshmemi_reduce_kernel<float, (rdxn_ops)0>(int, int, int, float*, float const*, "
      "unsigned long, float*, long*)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->library, CollectiveLibrary::Nvshmem);
  k = classify_collective(
      "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, "
      "vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->library, CollectiveLibrary::CustomAllReduce);
  EXPECT_EQ(k->operation, "AllReduce");
  EXPECT_TRUE(is_collective("void aiter::cross_device_reduce_2stage<bf16,8,false>(...)"));
  k = classify_collective(
      "void c10d::symmetric_memory::two_shot_all_reduce_kernel<c10::BFloat16, 16, 8>("
      "c10::BFloat16**, unsigned long, unsigned long, unsigned int**, unsigned long, unsigned "
      "long)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->library, CollectiveLibrary::SymmetricMemory);
  EXPECT_TRUE(is_collective("one_shot_all_reduce_kernel"));  // the Triton kernel of that name
  EXPECT_EQ(classify_collective("multimem_all_gather_kernel")->operation, "AllGather");
}

TEST(KernelsCollectives, KernelsThatOnlyMentionALibraryAreCompute) {
  for (const char* name : {
           "ampere_sgemm_128x64_nn",
           "sm90_xmma_gemm_bf16bf16_bf16f32",
           // A user kernel whose name mentions NCCL: no camel-case NCCL prefix.
           "my_nccl_like(float*, int)",
           "nccl_pack_kernel(float*)",
           "ncclish",
           // Templated on an NCCL type: the kernel itself is the user's.
           "void my_reduce<ncclDataType_t>(float*)",
           // In a namespace called nccl: the short name is the user's.
           "void nccl::helpers::scale(float*)",
           "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)",
           "cross_device_copy",  // not the all-reduce's prefix
           "nvshmem_like_kernel",
       }) {
    EXPECT_FALSE(is_collective(name)) << name;
  }
}

}  // namespace
}  // namespace gpulens::kernels

// SPDX-License-Identifier: Apache-2.0
// The kernel rows marked collectives, and their share of kernel time (which names
// are collectives: kernels/record/kernel_names_test.cpp).
#include "kernels/view/collectives.hpp"

#include <gtest/gtest.h>

namespace gpulens::kernels {
namespace {

TEST(KernelsCollectives, MarkAndShareCountOnlyCollectiveRows) {
  std::vector<KernelRow> rows(3);
  rows[0].name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  rows[0].share = 0.45;
  rows[1].name = "sm90_xmma_gemm_bf16bf16_bf16f32";
  rows[1].share = 0.40;
  rows[2].name = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  rows[2].share = 0.05;
  EXPECT_DOUBLE_EQ(collective_share(rows), 0);  // not marked yet
  mark_collectives(rows);
  EXPECT_TRUE(rows[0].collective);
  EXPECT_FALSE(rows[1].collective);
  EXPECT_TRUE(rows[2].collective);
  EXPECT_NEAR(collective_share(rows), 0.50, 1e-12);
}

}  // namespace
}  // namespace gpulens::kernels

// SPDX-License-Identifier: Apache-2.0
// How many blocks fit on an SM, and which limit says so: the occupancy
// calculator's arithmetic on an H100's limits, and the limits by architecture name.
#include "kernels/view/occupancy.hpp"

#include <gtest/gtest.h>

namespace gpulens::kernels {
namespace {

TEST(KernelsOccupancy, RegistersSharedMemoryAndWarpsLimitBlocksPerSm) {
  const SmLimits h100 = *limits_for_architecture("Hopper", 132);
  // 1024 threads x 64 registers: 32 warps x 2048 registers = the whole file.
  Occupancy o = occupancy({9, 1024, 64, 0}, h100);
  EXPECT_EQ(o.blocks_per_sm, 1u);
  EXPECT_STREQ(o.limited_by, "registers");
  EXPECT_EQ(o.sms_used, 9u);
  EXPECT_NEAR(o.waves, 9.0 / 132, 1e-12);
  // 100 KB of shared memory per block: two fit in 228 KB.
  o = occupancy({1000, 128, 32, 100 * 1024}, h100);
  EXPECT_EQ(o.blocks_per_sm, 2u);
  EXPECT_STREQ(o.limited_by, "shared memory");
  EXPECT_EQ(o.sms_used, 132u);
  // Small blocks: the 32-block limit.
  o = occupancy({10000, 32, 16, 0}, h100);
  EXPECT_EQ(o.blocks_per_sm, 32u);
  EXPECT_STREQ(o.limited_by, "blocks");
  EXPECT_FALSE(limits_for_architecture("Unknown", 10).has_value());
}

TEST(KernelsOccupancy, WarpsLimitLargeBlocksAndAWaveCountsEveryBlock) {
  const SmLimits a100 = *limits_for_architecture("Ampere", 108);
  // 768 threads = 24 warps: two blocks fill 48 of 64 warps, a third does not fit.
  const Occupancy o = occupancy({216, 768, 0, 0}, a100);
  EXPECT_EQ(o.blocks_per_sm, 2u);
  EXPECT_STREQ(o.limited_by, "warps");
  EXPECT_EQ(o.sms_used, 108u);
  EXPECT_DOUBLE_EQ(o.waves, 1.0);
  // Turing's smaller SM: 16 blocks at most, 32 warps.
  const SmLimits t4 = *limits_for_architecture("Turing", 40);
  EXPECT_EQ(t4.max_blocks, 16u);
  EXPECT_EQ(occupancy({40, 1024, 0, 0}, t4).blocks_per_sm, 1u);
}

TEST(KernelsOccupancy, AShapeNoSmCouldHoldStillCountsOneBlockAndNeverDividesByZero) {
  const SmLimits h100 = *limits_for_architecture("Hopper", 132);
  // Values a record may carry that no launch could have: the kernel ran, so one block.
  const Occupancy o = occupancy({5, UINT32_MAX, UINT32_MAX, UINT32_MAX}, h100);
  EXPECT_EQ(o.blocks_per_sm, 1u);
  EXPECT_EQ(o.sms_used, 5u);
  // No SM count known: nothing said of SMs or waves.
  SmLimits unknown = h100;
  unknown.sms = 0;
  const Occupancy u = occupancy({1000, 128, 32, 0}, unknown);
  EXPECT_EQ(u.sms_used, 0u);
  EXPECT_EQ(u.waves, 0);
}

}  // namespace
}  // namespace gpulens::kernels

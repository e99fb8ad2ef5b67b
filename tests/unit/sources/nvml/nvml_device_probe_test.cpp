// SPDX-License-Identifier: Apache-2.0
// The static facts read once at open (src/sources/nvml/nvml_device_probe.cpp):
// identity, SM count and where it came from, limits, NVLink links, MIG mode;
// and the tables behind them (architecture names, FP32 cores per SM).
#include <gtest/gtest.h>

#include <string>

#include "nvml_fake.hpp"
#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources {
namespace {

using namespace gpulens::testing;  // the NVML fake

TEST_F(NvmlCollectorTest, ProbesStaticFactsOnce) {
  auto c = open();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->driver_version(), "580.159.04");
  ASSERT_EQ(c->devices().size(), 2u);
  const DeviceInfo& h = c->devices()[0];
  EXPECT_EQ(h.index, 0);
  EXPECT_EQ(h.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h.uuid, "GPU-fake-0");
  EXPECT_EQ(h.architecture, "Hopper");
  EXPECT_EQ(h.sm_count, 132);  // 16896 cores / 128 per SM (attributes: not supported)
  EXPECT_NE(h.extra.value("x_sm_count_source", "").find("128"), std::string::npos);
  EXPECT_EQ(h.mem_total_mib, 81559.0);
  EXPECT_EQ(h.power_limit_w, 700.0);
  EXPECT_EQ(h.max_sm_clock_mhz, 1980.0);
  EXPECT_EQ(h.max_mem_clock_mhz, 2619.0);
  EXPECT_EQ(h.pcie_gen, 5);
  EXPECT_EQ(h.pcie_width, 16);
  EXPECT_EQ(h.mig_enabled, false);
  EXPECT_EQ(h.nvlink_count, 0);
  const DeviceInfo& a = c->devices()[1];
  EXPECT_EQ(a.architecture, "Ampere");
  EXPECT_EQ(a.sm_count, 108);  // GA100: 64 FP32 cores per SM
  EXPECT_EQ(a.nvlink_count, 12);
  EXPECT_EQ(fake.count("nvmlDeviceGetName", 0), 1);
}

TEST_F(NvmlCollectorTest, SmCountPrefersDeviceAttributes) {
  fake.gpus[0].attributes_ret = kOk;
  fake.gpus[0].attributes_sm = 114;
  auto c = open();
  EXPECT_EQ(c->devices()[0].sm_count, 114);
  EXPECT_EQ(c->devices()[0].extra.value("x_sm_count_source", ""), "nvmlDeviceGetAttributes_v2");
}

TEST(NvmlDeviceProbe, ArchitecturesAreNamedAndOrinIsNotHopperClass) {
  using nvml_detail::architecture_name;
  using nvml_detail::hopper_or_newer;
  EXPECT_EQ(architecture_name(nvml::kArchHopper), "Hopper");
  EXPECT_EQ(architecture_name(nvml::kArchBlackwell), "Blackwell");
  EXPECT_EQ(architecture_name(nvml::kArchAmpere), "Ampere");
  EXPECT_EQ(architecture_name(nvml::kArchUnknown), "");
  EXPECT_TRUE(hopper_or_newer(nvml::kArchHopper));
  EXPECT_TRUE(hopper_or_newer(nvml::kArchBlackwell));
  EXPECT_FALSE(hopper_or_newer(nvml::kArchAmpere));
  EXPECT_FALSE(hopper_or_newer(nvml::kArchAda));
  // Orin's number is above Hopper's, but it is an Ampere-class part.
  EXPECT_FALSE(hopper_or_newer(nvml::kArchOrin));
  EXPECT_FALSE(hopper_or_newer(nvml::kArchUnknown));
}

TEST(NvmlDeviceProbe, Fp32CoresPerSmFollowTheComputeCapability) {
  using nvml_detail::fp32_cores_per_sm;
  EXPECT_EQ(fp32_cores_per_sm(9, 0), 128);   // H100: 16896 / 128 = 132 SMs
  EXPECT_EQ(fp32_cores_per_sm(10, 0), 128);  // Blackwell
  EXPECT_EQ(fp32_cores_per_sm(8, 0), 64);    // GA100
  EXPECT_EQ(fp32_cores_per_sm(8, 6), 128);   // GA10x
  EXPECT_EQ(fp32_cores_per_sm(8, 9), 128);   // Ada
  EXPECT_EQ(fp32_cores_per_sm(7, 0), 64);    // Volta
  EXPECT_EQ(fp32_cores_per_sm(6, 0), 64);    // GP100
  EXPECT_EQ(fp32_cores_per_sm(6, 1), 128);   // GP10x
  EXPECT_EQ(fp32_cores_per_sm(3, 5), 192);   // Kepler
  EXPECT_EQ(fp32_cores_per_sm(2, 0), 0);     // unknown: no SM count guessed
}

// A driver without the core count still gives the compute capability; the SM
// count is then absent rather than guessed.
TEST_F(NvmlCollectorTest, SmCountIsAbsentWhenTheDriverLacksTheCoreCount) {
  fake.hidden = {"nvmlDeviceGetNumGpuCores"};
  api = std::move(load_nvml_api(fake.lookup())).value();
  auto c = open();
  ASSERT_TRUE(c);
  const DeviceInfo& h = c->devices()[0];
  EXPECT_FALSE(h.sm_count);
  EXPECT_FALSE(h.extra.contains("x_sm_count_source"));
  EXPECT_EQ(h.extra.value("x_compute_capability", ""), "9.0");
  EXPECT_EQ(h.name, "NVIDIA H100 80GB HBM3");  // the other facts are read as before
}

// Only active links count, and only they are remembered for the error counters.
TEST_F(NvmlCollectorTest, InactiveNvlinksAreNotCounted) {
  fake.gpus[1].nvlinks_down = {3, 5};
  auto c = open();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->devices()[1].nvlink_count, 10);
  EXPECT_EQ(c->devices()[0].nvlink_count, 0);  // NOT_SUPPORTED for link 0: no NVLink
}

}  // namespace
}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
// The classic per-tick readings against the fake NVML
// (src/sources/nvml/nvml_classic.cpp): calls a GPU or driver refuses are made
// once and explained, the energy counter integrated between rare reads, ECC
// counts read every ten seconds.
#include <gtest/gtest.h>

#include <string>

#include "nvml_fake.hpp"

namespace gpulens::sources {
namespace {

using namespace gpulens::testing;  // the NVML fake

TEST_F(NvmlCollectorTest, UnsupportedCallsAreMadeOnceNeverAgain) {
  fake.gpus[1].power_ret = Return::NotSupported;
  auto c = open();
  for (int i = 0; i < 3; ++i) tick(*c, 1, 0.5);
  EXPECT_EQ(fake.count("nvmlDeviceGetFieldValues", 1), 1);  // HBM temp: field unsupported
  EXPECT_EQ(fake.count("nvmlDeviceGetPowerUsage", 1), 1);
  EXPECT_EQ(fake.count("nvmlDeviceGetTotalEccErrors", 1), 0);  // ECC off: never asked
  EXPECT_EQ(fake.count("nvmlDeviceGetUtilizationRates", 1), 4);
  const DeviceInfo& a = c->devices()[1];
  ASSERT_NE(a.unsupported_reason(Metric::MemTempC), nullptr);
  EXPECT_EQ(*a.unsupported_reason(Metric::MemTempC), "n/a: not supported by this GPU");
  ASSERT_NE(a.unsupported_reason(Metric::PowerW), nullptr);
  ASSERT_NE(a.unsupported_reason(Metric::EccCorrected), nullptr);
  EXPECT_EQ(*a.unsupported_reason(Metric::EccCorrected), "n/a: ECC is disabled on this GPU");
  // The H100 supports all of them and is asked every tick.
  EXPECT_EQ(c->devices()[0].unsupported_reason(Metric::MemTempC), nullptr);
}

TEST_F(NvmlCollectorTest, EnergyIsIntegratedBetweenRareReads) {
  NvmlOptions options;
  options.energy_refresh_s = 60;
  fake.gpus[0].power_mw = 100000;  // 100 W
  auto c = open(options);
  EXPECT_EQ(fake.count("nvmlDeviceGetTotalEnergyConsumption", 0), 1);
  // The counter was read at open; 1.5 s at 100 W later (the GPM probe slept 0.1 s
  // of it) the estimate is 150 J = 150000 mJ above it.
  const double opened = 1000000;
  Sample s = tick(*c, 0, 1.5 - 0.1);
  EXPECT_NEAR(*s.get(Metric::EnergyMj), opened + 150000, 1e-6);
  fake.gpus[0].power_mw = 300000;  // ramps to 300 W: a trapezoid, mean 200 W over 1 s
  s = tick(*c, 0, 1.0);
  EXPECT_NEAR(*s.get(Metric::EnergyMj), opened + 350000, 1e-6);
  EXPECT_EQ(fake.count("nvmlDeviceGetTotalEnergyConsumption", 0), 1);

  // Past the refresh interval the counter is read again and wins...
  fake.gpus[0].energy_mj = 90000000;
  s = tick(*c, 0, 60.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetTotalEnergyConsumption", 0), 2);
  EXPECT_EQ(s.get(Metric::EnergyMj), 90000000.0);
  // ...but a counter below the running estimate never makes the output go down.
  fake.gpus[0].energy_mj = 1;
  s = tick(*c, 0, 61.0);
  EXPECT_EQ(s.get(Metric::EnergyMj), 90000000.0);
}

TEST_F(NvmlCollectorTest, EccCountsAreReadEveryTenSecondsAndRepeatedBetween) {
  auto c = open();
  const int at_open = fake.count("nvmlDeviceGetTotalEccErrors", 0);  // corrected + uncorrected
  EXPECT_EQ(at_open, 2);
  fake.gpus[0].ecc_corrected = 7;
  // Within ten seconds of the read at open, the counts from then are repeated.
  Sample s = tick(*c, 0, 4.0);
  EXPECT_EQ(s.get(Metric::EccCorrected), 3.0);
  EXPECT_EQ(s.get(Metric::EccUncorrected), 0.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetTotalEccErrors", 0), at_open);
  s = tick(*c, 0, 6.0);
  EXPECT_EQ(s.get(Metric::EccCorrected), 7.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetTotalEccErrors", 0), at_open + 2);
}

TEST_F(NvmlCollectorTest, EccCountsThatFailedToReadAreAbsentAndTriedNextTick) {
  NvmlOptions options;
  options.ecc_refresh_s = 60;
  auto c = open(options);
  fake.gpus[0].ecc_uncorrected = 1;
  Sample s = tick(*c, 0, 61.0);
  EXPECT_EQ(s.get(Metric::EccUncorrected), 1.0);
  const int calls = fake.count("nvmlDeviceGetTotalEccErrors", 0);
  // A refresh that fails (not for good) leaves the counts absent rather than
  // repeating old ones...
  fake.gpus[0].ecc_ret = Return::Unknown;
  s = tick(*c, 0, 61.0);
  EXPECT_FALSE(s.get(Metric::EccUncorrected));
  // ...and the next tick asks again instead of waiting another minute.
  fake.gpus[0].ecc_ret = Return::Success;
  s = tick(*c, 0, 1.0);
  EXPECT_EQ(s.get(Metric::EccUncorrected), 1.0);
  EXPECT_GT(fake.count("nvmlDeviceGetTotalEccErrors", 0), calls + 2);
}

// A driver older than R535 has only the "throttle" name of the clock event reasons.
TEST_F(NvmlCollectorTest, OlderDriversGiveClockReasonsByTheirThrottleName) {
  fake.hidden = {"nvmlDeviceGetCurrentClocksEventReasons"};
  api = std::move(load_nvml_api(fake.lookup())).value();
  auto c = open();
  ASSERT_TRUE(c);
  EXPECT_EQ(tick(*c, 0, 1.0).get(Metric::ClockEventReasons), 4.0);
  EXPECT_GE(fake.count("nvmlDeviceGetCurrentClocksThrottleReasons", 0), 2);  // open, tick
  EXPECT_EQ(c->devices()[0].unsupported_reason(Metric::ClockEventReasons), nullptr);
}

TEST_F(NvmlCollectorTest, AFunctionTheDriverLacksIsNamedInTheReason) {
  fake.hidden = {"nvmlDeviceGetPowerUsage"};
  api = std::move(load_nvml_api(fake.lookup())).value();
  auto c = open();
  ASSERT_TRUE(c);
  const std::string* why = c->devices()[0].unsupported_reason(Metric::PowerW);
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(*why, "n/a: this NVIDIA driver lacks nvmlDeviceGetPowerUsage");
  const Sample s = tick(*c, 0, 1.0);
  EXPECT_FALSE(s.get(Metric::PowerW));
  EXPECT_EQ(s.get(Metric::TempC), 60.0);
}

// NVML's "unknown" performance state (32) is no P-state: absent, not 32.
TEST_F(NvmlCollectorTest, UnknownPstateIsAbsent) {
  auto c = open();
  ASSERT_TRUE(c);
  EXPECT_EQ(tick(*c, 0, 1.0).get(Metric::Pstate), 0.0);
  fake.gpus[0].pstate = nvml::kPstateUnknown;
  EXPECT_FALSE(tick(*c, 0, 1.0).get(Metric::Pstate));
}

}  // namespace
}  // namespace gpulens::sources

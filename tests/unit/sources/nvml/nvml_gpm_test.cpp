// SPDX-License-Identifier: Apache-2.0
// GPM against the fake NVML (src/sources/nvml/nvml_gpm.cpp): the metrics of one
// request per tick, the reasons for what a device or driver cannot give, the
// 100 ms between samples, empty intervals, and MIG GPU instances.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "nvml_fake.hpp"

namespace gpulens::sources {
namespace {

using namespace gpulens::testing;  // the NVML fake

TEST_F(NvmlCollectorTest, GpmMetricsMapToTraceKeysFromOneRequestPerTick) {
  auto c = open();
  const int requests_at_open = fake.count("nvmlGpmMetricsGet", 0);
  EXPECT_EQ(requests_at_open, 1);  // the open-time probe
  const Sample s = tick(*c, 0, 1.0);
  EXPECT_EQ(fake.count("nvmlGpmMetricsGet", 0), requests_at_open + 1);
  EXPECT_EQ(s.get(Metric::GraphicsActive), 91.0);
  EXPECT_EQ(s.get(Metric::SmActive), 88.5);
  EXPECT_EQ(s.get(Metric::SmOccupancy), 40.0);
  EXPECT_EQ(s.get(Metric::TensorActive), 70.0);
  EXPECT_EQ(s.get(Metric::DfmaActive), 0.0);
  EXPECT_EQ(s.get(Metric::HmmaActive), 65.0);
  EXPECT_EQ(s.get(Metric::DramActive), 45.0);
  EXPECT_EQ(s.get(Metric::Fp64Active), 0.5);
  EXPECT_EQ(s.get(Metric::Fp32Active), 12.0);
  EXPECT_EQ(s.get(Metric::Fp16Active), 3.0);
  EXPECT_EQ(s.get(Metric::IntActive), 21.0);  // GPM metric 4, asked for with the other pipes
  EXPECT_EQ(s.get(Metric::PcieTxMibs), 100.0);
  EXPECT_EQ(s.get(Metric::PcieRxMibs), 250.0);
  // Classic readings alongside.
  EXPECT_EQ(s.get(Metric::GpuUtil), 97.0);
  EXPECT_EQ(s.get(Metric::MemUtil), 40.0);
  EXPECT_EQ(s.get(Metric::PowerW), 500.0);
  EXPECT_EQ(s.get(Metric::TempC), 60.0);
  EXPECT_EQ(s.get(Metric::MemTempC), 70.0);
  EXPECT_EQ(s.get(Metric::SmClockMhz), 1755.0);
  EXPECT_EQ(s.get(Metric::MemClockMhz), 2619.0);
  EXPECT_EQ(s.get(Metric::ClockEventReasons), 4.0);
  EXPECT_EQ(s.get(Metric::Pstate), 0.0);
  EXPECT_EQ(s.get(Metric::MemUsedMib), 1024.0);
  EXPECT_EQ(s.get(Metric::EccCorrected), 3.0);
  EXPECT_EQ(s.get(Metric::EccUncorrected), 0.0);
  EXPECT_FALSE(s.get(Metric::HostCpuPct));
  EXPECT_GT(cost.classic_s + cost.gpm_s + cost.procs_s, 0.0);
}

// A kernel that only does integer arithmetic (hashing, index math) keeps the SMs
// busy with every floating-point and tensor pipe at 0: the integer pipe is what
// tells it from a hang, so it must reach the sample.
TEST_F(NvmlCollectorTest, IntegerOnlyWorkShowsOnTheIntegerPipe) {
  for (unsigned id : {nvml::kGpmAnyTensorUtil, nvml::kGpmHmmaTensorUtil, nvml::kGpmFp64Util,
                      nvml::kGpmFp32Util, nvml::kGpmFp16Util}) {
    fake.gpus[0].gpm[id] = {kOk, 0};
  }
  fake.gpus[0].gpm[nvml::kGpmIntegerUtil] = {kOk, 64};
  auto c = open();
  const Sample s = tick(*c, 0, 1.0);
  EXPECT_EQ(s.get(Metric::SmActive), 88.5);
  EXPECT_EQ(s.get(Metric::Fp32Active), 0.0);
  EXPECT_EQ(s.get(Metric::TensorActive), 0.0);
  EXPECT_EQ(s.get(Metric::IntActive), 64.0);
  // A GPU that cannot give it says why, like the other GPM metrics.
  fake.gpus[0].gpm.erase(nvml::kGpmIntegerUtil);
  auto without = open();
  EXPECT_FALSE(tick(*without, 0, 1.0).get(Metric::IntActive));
  const std::string* why = without->devices()[0].unsupported_reason(Metric::IntActive);
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(*why, "n/a: not supported by this GPU");
}

TEST_F(NvmlCollectorTest, MetricWithFailedReturnIsAbsent) {
  auto c = open();
  const Sample s = tick(*c, 0, 1.0);
  // IMMA failed transiently (UNKNOWN): absent, but still asked for next time.
  EXPECT_FALSE(s.get(Metric::ImmaActive));
  EXPECT_EQ(c->devices()[0].unsupported_reason(Metric::ImmaActive), nullptr);
  fake.gpus[0].gpm[9] = {kOk, 7};
  EXPECT_EQ(tick(*c, 0, 1.0).get(Metric::ImmaActive), 7.0);
  // NVLink answered NOT_SUPPORTED at open: absent and explained.
  EXPECT_FALSE(s.get(Metric::NvlinkTxMibs));
  const std::string* why = c->devices()[0].unsupported_reason(Metric::NvlinkRxMibs);
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(*why, "n/a: not supported by this GPU");
}

TEST_F(NvmlCollectorTest, AmpereGetsGpmNeedsHopper) {
  auto c = open();
  const DeviceInfo& a = c->devices()[1];
  for (Metric m : {Metric::SmActive, Metric::TensorActive, Metric::DramActive}) {
    const std::string* why = a.unsupported_reason(m);
    ASSERT_NE(why, nullptr);
    EXPECT_EQ(*why, "n/a: GPM needs Hopper or newer");
  }
  const Sample s = tick(*c, 1, 1.0);
  EXPECT_FALSE(s.get(Metric::SmActive));
  EXPECT_EQ(s.get(Metric::GpuUtil), 97.0);
  EXPECT_EQ(fake.count("nvmlGpmSampleGet", 1), 0);
}

TEST_F(NvmlCollectorTest, GpmNoPermissionIsReported) {
  fake.gpus[0].gpm_sample_ret = Return::NoPermission;
  auto c = open();
  const std::string* why = c->devices()[0].unsupported_reason(Metric::SmActive);
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(*why, "n/a: no permission (GPM returned NVML_ERROR_NO_PERMISSION)");
  const int attempts = fake.count("nvmlGpmSampleGet", 0);
  const Sample s = tick(*c, 0, 1.0);
  EXPECT_FALSE(s.get(Metric::SmActive));
  EXPECT_EQ(s.get(Metric::PowerW), 500.0);
  EXPECT_EQ(fake.count("nvmlGpmSampleGet", 0), attempts);
  EXPECT_EQ(fake.live_gpm_samples, 0);
}

TEST_F(NvmlCollectorTest, GpmIsSkippedWhenTicksAreUnder100msApart) {
  auto c = open();
  EXPECT_TRUE(tick(*c, 0, 0.2).get(Metric::SmActive));
  const int samples = fake.count("nvmlGpmSampleGet", 0);
  const Sample quick = tick(*c, 0, 0.05);
  EXPECT_FALSE(quick.get(Metric::SmActive));
  EXPECT_EQ(quick.get(Metric::GpuUtil), 97.0);  // the classic readings still come
  EXPECT_EQ(fake.count("nvmlGpmSampleGet", 0), samples);
  EXPECT_TRUE(tick(*c, 0, 0.06).get(Metric::SmActive));  // 110 ms since the last sample
  EXPECT_GE(fake.min_gpm_interval, 0.1);
  // A 10 Hz sampler a few ms early still gets GPM; 90 ms is too short.
  EXPECT_TRUE(tick(*c, 0, 0.097).get(Metric::SmActive));
  EXPECT_FALSE(tick(*c, 0, 0.09).get(Metric::SmActive));
}

// An interval the driver had no data for reads every GPM metric 0 with DRAM
// bandwidth missing; the collector keeps its older baseline instead of emitting
// a 100 ms "idle" blip. On the H200s DRAM came back as a success holding NaN,
// which must count as missing too (it reached the trace as zeros before).
TEST_F(NvmlCollectorTest, EmptyGpmIntervalsAreSpannedNotEmitted) {
  for (const bool nan_dram : {false, true}) {
    SCOPED_TRACE(nan_dram ? "DRAM: success with NaN" : "DRAM: an error");
    auto c = open();
    EXPECT_EQ(tick(*c, 0, 1.0).get(Metric::SmActive), 88.5);
    const auto busy = fake.gpus[0].gpm;
    for (auto& [id, m] : fake.gpus[0].gpm) m.value = 0;
    auto& dram = fake.gpus[0].gpm[nvml::kGpmDramBwUtil];
    dram = nan_dram ? FakeGpmMetric{kOk, std::nan("")} : FakeGpmMetric{Return::Unknown, 0};
    const Sample empty = tick(*c, 0, 0.1);
    EXPECT_FALSE(empty.get(Metric::SmActive));
    EXPECT_FALSE(empty.get(Metric::PcieRxMibs));
    EXPECT_EQ(empty.get(Metric::GpuUtil), 97.0);  // the classic readings still come
    fake.gpus[0].gpm = busy;
    EXPECT_EQ(tick(*c, 0, 0.1).get(Metric::SmActive), 88.5);  // spans both intervals
    // A GPU that is really idle reads 0 with DRAM answering: that is emitted.
    for (auto& [id, m] : fake.gpus[0].gpm) m.value = 0;
    EXPECT_EQ(tick(*c, 0, 0.1).get(Metric::SmActive), 0.0);
    fake.gpus[0].gpm = busy;
  }
}

TEST_F(NvmlCollectorTest, MigInstancesGetTheirOwnGpmValues) {
  fake.gpus[0].mig = true;
  fake.gpus[0].mig_instances = {1, 2, 2};  // two compute instances share GPU instance 2
  auto c = open();
  EXPECT_EQ(c->devices()[0].mig_enabled, true);
  const Sample s = tick(*c, 0, 1.0);
  ASSERT_TRUE(s.extra.contains("x_mig"));
  const auto& mig = s.extra["x_mig"];
  ASSERT_EQ(mig.size(), 2u);
  EXPECT_EQ(mig[0]["gpu_instance"], 1);
  EXPECT_EQ(mig[0]["sm_active"], 89.5);  // the fake adds the instance id
  EXPECT_EQ(mig[1]["gpu_instance"], 2);
  EXPECT_EQ(mig[1]["tensor_active"], 72.0);
  // Its MIG devices' UUIDs, by which a device plugin hands slices to pods.
  const auto& uuids = c->devices()[0].extra["x_mig_uuids"];
  ASSERT_EQ(uuids.size(), 3u) << uuids.dump();
  EXPECT_EQ(uuids[0].get<std::string>().rfind("MIG-", 0), 0u) << uuids.dump();
  EXPECT_NE(uuids[0], uuids[1]);
  EXPECT_FALSE(c->devices()[1].extra.contains("x_mig_uuids"));  // not in MIG mode
}

TEST_F(NvmlCollectorTest, DriverWithoutGpmSaysSo) {
  fake.hidden = {"nvmlGpmMetricsGet"};
  api = std::move(load_nvml_api(fake.lookup())).value();
  auto c = open();
  const std::string* why = c->devices()[0].unsupported_reason(Metric::SmActive);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(why->find("no GPM API"), std::string::npos);
  EXPECT_EQ(tick(*c, 0, 1.0).get(Metric::GpuUtil), 97.0);
}

// An interval the driver had no GPM data for (every metric 0, DRAM missing)
// is not emitted as zeros: the older baseline is kept and the next interval
// covers both, for up to 2 s.
TEST_F(NvmlCollectorTest, EmptyGpmIntervalKeepsTheBaseline) {
  auto c = open();
  ASSERT_EQ(tick(*c, 0, 1.0).get(Metric::SmActive), 88.5);
  const auto normal = fake.gpus[0].gpm;
  auto empty = normal;
  for (auto& [id, m] : empty) {
    if (m.ret == kOk) m.value = 0;
  }
  empty[nvml::kGpmDramBwUtil] = {Return::Unknown, 0};
  fake.gpus[0].gpm = empty;
  const Sample skipped = tick(*c, 0, 0.1);
  EXPECT_FALSE(skipped.get(Metric::SmActive));
  EXPECT_FALSE(skipped.get(Metric::PcieRxMibs));
  EXPECT_EQ(skipped.get(Metric::GpuUtil), 97.0);  // classic metrics are unaffected
  fake.gpus[0].gpm = normal;
  EXPECT_EQ(tick(*c, 0, 0.1).get(Metric::SmActive), 88.5);
  // A GPU whose GPM stays empty beyond 2 s is reported as it reads.
  fake.gpus[0].gpm = empty;
  std::optional<double> sm;
  for (int i = 0; i < 4 && !sm; ++i) sm = tick(*c, 0, 1.0).get(Metric::SmActive);
  EXPECT_EQ(sm, 0.0);
}

TEST_F(NvmlCollectorTest, GpmSwitchedOffTakesNoSamplesAndSaysWhy) {
  NvmlOptions options;
  options.gpm = false;
  auto c = open(options);
  ASSERT_TRUE(c);
  const std::string* why = c->devices()[0].unsupported_reason(Metric::SmActive);
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(*why, "n/a: GPM switched off (--no-gpm)");
  const Sample s = tick(*c, 0, 1.0);
  EXPECT_FALSE(s.get(Metric::SmActive));
  EXPECT_EQ(s.get(Metric::GpuUtil), 97.0);
  EXPECT_EQ(fake.count("nvmlGpmSampleGet", 0), 0);
  EXPECT_EQ(fake.live_gpm_samples, 0);
}

}  // namespace
}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
// The NVML collector against a fake NVML with two GPUs: an H100 with GPM and an A100
// without. The fake counts calls and its clock only moves when a test moves it.
#include "sources/nvml/nvml_collector.hpp"

#include <gtest/gtest.h>

#include <string>

#include "nvml_fake.hpp"

namespace gpulens::sources {
namespace {

using namespace gpulens::testing;  // the NVML fake

TEST_F(NvmlCollectorTest, LostGpuYieldsOneEventAndOthersContinue) {
  auto c = open();
  EXPECT_TRUE(c->poll_events().empty());
  fake.gpus[0].lost = true;
  const Sample lost = tick(*c, 0, 1.0);
  EXPECT_TRUE(lost.values.empty());
  EXPECT_FALSE(lost.procs);
  auto events = c->poll_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, DeviceEvent::Kind::Lost);
  EXPECT_EQ(events[0].gpu, 0);
  EXPECT_EQ(events[0].t, fake.wall);

  const int calls = fake.count("nvmlDeviceGetUtilizationRates", 0);
  EXPECT_TRUE(tick(*c, 0, 1.0).values.empty());
  EXPECT_EQ(fake.count("nvmlDeviceGetUtilizationRates", 0), calls);  // no more calls
  EXPECT_TRUE(c->poll_events().empty());                             // reported once
  EXPECT_EQ(tick(*c, 1, 1.0).get(Metric::GpuUtil), 97.0);
}

TEST_F(NvmlCollectorTest, SelectsGpusAndExplainsBadIndices) {
  NvmlOptions options;
  options.gpus = {1};
  auto c = open(options);
  ASSERT_EQ(c->devices().size(), 1u);
  EXPECT_EQ(c->devices()[0].index, 1);
  EXPECT_EQ(tick(*c, 0, 1.0).get(Metric::GpuUtil), 97.0);

  options.api = &api;
  options.gpus = {5};
  auto bad = open_nvml_collector(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no GPU with index 5"), std::string::npos);
}

TEST_F(NvmlCollectorTest, InitFailureSaysHowToFix) {
  fake.init_ret = Return::DriverNotLoaded;
  NvmlOptions options;
  options.api = &api;
  auto c = open_nvml_collector(options);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("NVML_ERROR_DRIVER_NOT_LOADED"), std::string::npos);
  EXPECT_NE(c.error().message.find("--replay"), std::string::npos);
}

TEST_F(NvmlCollectorTest, ShutdownAndSamplesFreedOnClose) {
  {
    auto c = open();
    EXPECT_GT(fake.live_gpm_samples, 0);
  }
  EXPECT_EQ(fake.shutdowns, 1);
  EXPECT_EQ(fake.live_gpm_samples, 0);
  EXPECT_EQ(fake.count("nvmlEventSetFree"), 1);
}

}  // namespace
}  // namespace gpulens::sources

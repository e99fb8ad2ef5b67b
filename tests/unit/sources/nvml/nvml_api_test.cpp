// SPDX-License-Identifier: Apache-2.0
#include "sources/nvml/nvml_api.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "nvml_fake.hpp"

namespace gpulens::sources {
namespace {

using testing::FakeNvml;

TEST(NvmlApi, TableNamesVersionedSymbolsOnce) {
  std::set<std::string> seen;
  for (const auto& entry : nvml_entry_points()) {
    EXPECT_TRUE(seen.insert(entry.symbol).second) << entry.symbol << " listed twice";
  }
  // design.md: these must be asked for by their versioned names.
  for (const char* versioned :
       {"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
        "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlEventSetWait_v2",
        "nvmlDeviceGetMemoryInfo_v2"}) {
    EXPECT_EQ(seen.count(versioned), 1u) << versioned;
  }
  EXPECT_EQ(seen.count("nvmlDeviceGetComputeRunningProcesses"), 0u);
}

TEST(NvmlApi, FakeImplementsEveryEntryPoint) {
  FakeNvml fake;
  auto api = load_nvml_api(fake.lookup());
  ASSERT_TRUE(api.ok()) << api.error().message;
  EXPECT_TRUE(api->missing.empty());
  EXPECT_TRUE(api->has_gpm());
  EXPECT_TRUE(api->has_mig_gpm());
  EXPECT_TRUE(api->has_events());
  EXPECT_EQ(api->library, nullptr);
}

TEST(NvmlApi, MissingOptionalSymbolLoadsWithCapabilityOff) {
  FakeNvml fake;
  fake.hidden = {"nvmlGpmMetricsGet", "nvmlEventSetWait_v2"};
  auto api = load_nvml_api(fake.lookup());
  ASSERT_TRUE(api.ok()) << api.error().message;
  EXPECT_EQ(api->gpmMetricsGet, nullptr);
  EXPECT_FALSE(api->has_gpm());
  EXPECT_FALSE(api->has_mig_gpm());
  EXPECT_FALSE(api->has_events());
  EXPECT_NE(api->gpmSampleGet, nullptr);
  EXPECT_EQ(api->missing.size(), 2u);
}

TEST(NvmlApi, MissingRequiredSymbolIsAnErrorThatNamesIt) {
  FakeNvml fake;
  fake.hidden = {"nvmlDeviceGetCount_v2"};
  auto api = load_nvml_api(fake.lookup());
  ASSERT_FALSE(api.ok());
  const std::string& message = api.error().message;
  EXPECT_NE(message.find("nvmlDeviceGetCount_v2"), std::string::npos) << message;
  EXPECT_NE(message.find("NVIDIA driver"), std::string::npos) << message;
  EXPECT_NE(message.find("--replay"), std::string::npos) << message;
}

TEST(NvmlApi, MissingLibrarySaysWhatWasLookedForAndHowToFix) {
  auto api = load_nvml_library();
  if (api.ok()) GTEST_SKIP() << "this machine has an NVIDIA driver";
  const std::string& message = api.error().message;
  EXPECT_NE(message.find("libnvidia-ml.so.1"), std::string::npos) << message;
  EXPECT_NE(message.find("install"), std::string::npos) << message;
  EXPECT_NE(message.find("--replay"), std::string::npos) << message;
}

TEST(NvmlApi, ErrorStringsPreferTheLibrary) {
  EXPECT_STREQ(nvml_error_string(4), "insufficient permissions");
  EXPECT_STREQ(nvml_error_string(15), "GPU is lost (fell off the bus)");
  EXPECT_STREQ(nvml_error_string(12345), "unrecognized NVML error");
  EXPECT_STREQ(nvml_error_name(nvml::Return::NoPermission), "NVML_ERROR_NO_PERMISSION");
  EXPECT_STREQ(nvml_error_name(15), "NVML_ERROR_GPU_IS_LOST");

  FakeNvml fake;
  auto api = load_nvml_api(fake.lookup());
  ASSERT_TRUE(api.ok());
  EXPECT_STREQ(nvml_error_string(4, &api.value()), "Insufficient Permissions");
  fake.hidden = {"nvmlErrorString"};
  auto without = load_nvml_api(fake.lookup());
  ASSERT_TRUE(without.ok());
  EXPECT_STREQ(nvml_error_string(4, &without.value()), "insufficient permissions");
}

}  // namespace
}  // namespace gpulens::sources

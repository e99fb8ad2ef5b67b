// SPDX-License-Identifier: Apache-2.0
// The data files: every NVML name we know maps to the right model, every model
// has a price, and the peak figures are the dense datasheet numbers.
#include "verdict/gpu_models.hpp"

#include <gtest/gtest.h>

#include "verdict/mfu.hpp"

namespace gpulens::verdict {
namespace {

const std::string kDataDir = std::string(GPULENS_SOURCE_DIR) + "/data";

const GpuModelTable& models() {
  static const GpuModelTable table = [] {
    auto t = GpuModelTable::load(kDataDir + "/gpu_peaks.json");
    if (!t) throw std::runtime_error(t.error().message);
    return std::move(*t);
  }();
  return table;
}

std::string model_of(const std::string& nvml_name) {
  const GpuModel* m = models().find(nvml_name);
  return m == nullptr ? "" : m->model;
}

TEST(ReportModels, NvmlNamesMapToTheirModel) {
  EXPECT_EQ(model_of("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(model_of("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(model_of("NVIDIA H100 NVL"), "H100 NVL");
  EXPECT_EQ(model_of("NVIDIA H200"), "H200");
  EXPECT_EQ(model_of("NVIDIA H200 NVL"), "H200 NVL");
  EXPECT_EQ(model_of("NVIDIA GH200 480GB"), "GH200");
  EXPECT_EQ(model_of("NVIDIA A100-SXM4-80GB"), "A100 SXM");
  EXPECT_EQ(model_of("NVIDIA A100 80GB PCIe"), "A100 PCIe");
  EXPECT_EQ(model_of("NVIDIA A100-PCIE-40GB"), "A100 PCIe");
  EXPECT_EQ(model_of("NVIDIA L40S"), "L40S");
  EXPECT_EQ(model_of("NVIDIA L40"), "L40");
  EXPECT_EQ(model_of("NVIDIA L4"), "L4");
  EXPECT_EQ(model_of("NVIDIA A10"), "A10");
  EXPECT_EQ(model_of("NVIDIA B200"), "B200");
  EXPECT_EQ(model_of("NVIDIA GB200"), "GB200");
  EXPECT_EQ(model_of("Tesla V100-SXM2-16GB"), "V100");
  EXPECT_EQ(model_of("NVIDIA GeForce RTX 3090"), "");
  EXPECT_EQ(model_of("NVIDIA A10G"), "");  // a different chip from the A10
}

TEST(ReportModels, DensePeaksAreTheDatasheetFigures) {
  const auto* h100 = models().find("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->peak_tflops("bf16").value(), 989.4);  // 1979 sparse / 2
  EXPECT_DOUBLE_EQ(h100->peak_tflops("fp8").value(), 1978.9);
  EXPECT_DOUBLE_EQ(h100->peak_tflops("tf32").value(), 494.7);
  EXPECT_DOUBLE_EQ(h100->peak_clock_mhz.value(), 1830);
  const auto* a100 = models().find("NVIDIA A100-SXM4-80GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->peak_tflops("bf16").value(), 312);
  EXPECT_FALSE(a100->peak_tflops("fp8"));  // Ampere has no FP8
  for (const auto& m : models().models()) {
    EXPECT_FALSE(m.source.empty()) << m.model << " says nowhere where its figures come from";
  }
}

TEST(ReportModels, EveryModelHasAPrice) {
  auto prices = PriceTable::load(kDataDir + "/prices.json");
  ASSERT_TRUE(prices) << prices.error().message;
  EXPECT_EQ(prices->currency(), "USD");
  for (const auto& m : models().models()) {
    EXPECT_TRUE(prices->price(m.model)) << "no price for " << m.model;
  }
}

TEST(ReportModels, MalformedTablesAreErrorsNotCrashes) {
  EXPECT_FALSE(GpuModelTable::parse("{", "x"));
  EXPECT_FALSE(GpuModelTable::parse(R"({"models": [{"model": "A"}]})", "x"));
  EXPECT_FALSE(GpuModelTable::parse(R"({"models": [{"model": "A", "match": "("}]})", "x"));
  EXPECT_FALSE(PriceTable::parse(R"({"prices": {"A": -1}})", "x"));
  EXPECT_FALSE(PriceTable::parse(R"({"prices": []})", "x"));
}

TEST(ReportModels, PeakOfAJobSumsItsGpusAndTheOverrideWins) {
  std::vector<DeviceInfo> devices(2);
  devices[0].index = 0;
  devices[0].name = "NVIDIA H200";
  devices[1].index = 1;
  devices[1].name = "NVIDIA H200";
  const auto peak = resolve_peak(devices, &models(), "bf16", std::nullopt);
  EXPECT_TRUE(peak.known());
  EXPECT_DOUBLE_EQ(peak.total_tflops, 2 * 989.5);
  EXPECT_EQ(peak.model, "H200");
  const auto forced = resolve_peak(devices, &models(), "bf16", 500.0);
  EXPECT_DOUBLE_EQ(forced.total_tflops, 1000);
  EXPECT_EQ(forced.source, "--peak-tflops");
  devices[1].name = "Mystery GPU";
  const auto unknown = resolve_peak(devices, &models(), "bf16", std::nullopt);
  EXPECT_FALSE(unknown.known());
  ASSERT_EQ(unknown.problems.size(), 1u);
  const auto no_fp8 = resolve_peak({devices[0]}, &models(), "fp64", std::nullopt);
  EXPECT_DOUBLE_EQ(no_fp8.total_tflops, 67);
}

}  // namespace
}  // namespace gpulens::verdict

// SPDX-License-Identifier: Apache-2.0
// The limits a GPU's loads are judged against, from its recording's header: PCIe
// from generation x width, NVLink from the active links or the model, the
// configured values over both, and what is not known said in notes.
#include "diagnosis/hardware.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::h100;

TEST(Hardware, PcieBandwidthFromGenerationAndWidth) {
  EXPECT_NEAR(*pcie_lane_gbytes_s(5) * 16, 63.0, 0.1);
  EXPECT_NEAR(*pcie_lane_gbytes_s(4) * 16, 31.5, 0.1);
  EXPECT_NEAR(*pcie_lane_gbytes_s(3) * 16, 15.75, 0.1);
  EXPECT_FALSE(pcie_lane_gbytes_s(9).has_value());
  const auto hw = hardware_limits(h100());
  EXPECT_NEAR(*hw.pcie_mibs, 63.015e9 / 1048576, 100);
  EXPECT_EQ(hw.nvlink_links, 18);
  EXPECT_NEAR(*hw.nvlink_mibs / kMibPerGb, 450, 0.5);
}

TEST(Hardware, ActiveLinkCountAndConfiguredValuesWin) {
  DeviceInfo d = h100();
  d.nvlink_count = 4;
  EXPECT_NEAR(*hardware_limits(d).nvlink_mibs / kMibPerGb, 100, 0.5);
  HardwareSettings s;
  s.pcie_mibs = 1000;
  s.nvlink_links = 2;
  s.nvlink_link_gbytes_s = 50;
  const auto hw = hardware_limits(d, s);
  EXPECT_EQ(*hw.pcie_mibs, 1000);
  EXPECT_NEAR(*hw.nvlink_mibs / kMibPerGb, 100, 0.5);
}

TEST(Hardware, PcieCardsGetNoGuessedNvlink) {
  DeviceInfo d = h100();
  d.name = "NVIDIA H100 PCIe";
  EXPECT_FALSE(hardware_limits(d).nvlink_mibs.has_value());
  d.name = "NVIDIA H100 NVL";
  EXPECT_FALSE(hardware_limits(d).nvlink_mibs.has_value());
}

TEST(Hardware, ArchitectureFromTheNameWhenTheHeaderHasNone) {
  EXPECT_EQ(guess_architecture("NVIDIA H100 80GB HBM3"), "Hopper");
  EXPECT_EQ(guess_architecture("NVIDIA H200"), "Hopper");
  EXPECT_EQ(guess_architecture("NVIDIA B200"), "Blackwell");
  EXPECT_EQ(guess_architecture("NVIDIA A100-SXM4-80GB"), "Ampere");
  EXPECT_EQ(guess_architecture("NVIDIA L40S"), "Ada");
  EXPECT_EQ(guess_architecture("Tesla T4"), "Turing");
  EXPECT_EQ(guess_architecture("Tesla V100-SXM2-16GB"), "Volta");
  EXPECT_EQ(guess_architecture("Some Future GPU"), "");
  DeviceInfo d = h100();
  d.architecture = "Blackwell";  // the header's word wins over the name
  EXPECT_EQ(hardware_limits(d).architecture, "Blackwell");
}

TEST(Hardware, WhatIsNotKnownIsNotJudgedAndSaysSo) {
  DeviceInfo d;
  d.name = "Some Future GPU";
  const auto hw = hardware_limits(d);
  EXPECT_FALSE(hw.pcie_mibs.has_value());
  EXPECT_FALSE(hw.nvlink_mibs.has_value());
  auto said = [&](const std::string& part) {
    for (const auto& note : hw.notes)
      if (note.find(part) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(said("PCIe link generation/width not in the header"));
  EXPECT_TRUE(said("NVLink link count or rate unknown"));
  EXPECT_TRUE(said("SM count unknown"));
  EXPECT_TRUE(said("device memory size unknown"));
  EXPECT_EQ(hw.gpm_missing_reason, "GPM needs Hopper or newer");

  d.pcie_gen = 9;
  d.pcie_width = 16;
  const auto unknown_gen = hardware_limits(d);
  EXPECT_FALSE(unknown_gen.pcie_mibs.has_value());
  ASSERT_FALSE(unknown_gen.notes.empty());
  EXPECT_EQ(unknown_gen.notes.front(),
            "PCIe generation 9 unknown to gpulens: PCIe load not judged");
}

TEST(Hardware, LinksWithoutAModelTakeTheArchitecturesRate) {
  DeviceInfo d;
  d.name = "NVIDIA A40";  // no NVLink model of its own; Ampere's 25 GB/s a link
  d.nvlink_count = 2;
  const auto hw = hardware_limits(d);
  ASSERT_TRUE(hw.nvlink_mibs.has_value());
  EXPECT_NEAR(*hw.nvlink_mibs / kMibPerGb, 50, 0.5);
  EXPECT_EQ(hw.nvlink_basis, "2 NVLink links (active) x 25 GB/s per direction");
  d.nvlink_count = 0;
  const auto none = hardware_limits(d);
  EXPECT_EQ(none.nvlink_links, 0);
  EXPECT_FALSE(none.nvlink_mibs.has_value());
}

TEST(Hardware, WhyGpmIsMissingDependsOnTheGpu) {
  DeviceInfo ampere;
  ampere.name = "NVIDIA A100-SXM4-80GB";
  EXPECT_EQ(hardware_limits(ampere).gpm_missing_reason,
            "GPM needs Hopper or newer (this GPU is Ampere)");
  const auto hopper = hardware_limits(h100()).gpm_missing_reason;
  EXPECT_NE(hopper.find("this Hopper GPU has GPM, but it was not recorded"), std::string::npos)
      << hopper;
  DeviceInfo dcgm = ampere;
  dcgm.extra = nlohmann::json{{"x_prof_source", "dcgm"}};
  EXPECT_NE(hardware_limits(dcgm).gpm_missing_reason.find("DCGM gave SM activity at the start"),
            std::string::npos);
}

}  // namespace
}  // namespace gpulens::diagnosis

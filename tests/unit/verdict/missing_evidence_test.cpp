// SPDX-License-Identifier: Apache-2.0
// Issue 28's bad input: a recording without GPM (an Ampere GPU, a container that
// NVML denies GPM) must not get a fix whose premise only GPM can check (SM
// coverage, the tensor or math pipes), and the verdict must say what it could
// not judge and what would settle it. The recordings are real H100 and H200
// ones with every GPM field taken out, as an older GPU would have written them.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/trace_reader.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::verdict {
namespace {

namespace fs = std::filesystem;

// The fields NVML's GPM gives (docs/metrics.md); the classic ones stay.
constexpr std::array kGpmFields = {
    "sm_active",    "sm_occupancy",   "tensor_active",  "dram_active",
    "fp64_active",  "fp32_active",    "fp16_active",    "hmma_active",
    "imma_active",  "dfma_active",    "int_active",     "pcie_tx_mibs",
    "pcie_rx_mibs", "nvlink_rx_mibs", "nvlink_tx_mibs", "graphics_active"};

// Fixes that rest on SM coverage or on what the math pipes do: without GPM
// nothing in the recording can support them.
constexpr std::array kGpmPremises = {"more blocks",  "SMs busy",  "split-K",
                                     "tensor cores", "math pipe", "TF32",
                                     "bf16",         "MPS",       "occupancy"};

fs::path without_gpm(const fs::path& from) {
  // The pid keeps parallel test processes (and other checkouts' runs) apart.
  const fs::path to = fs::path(::testing::TempDir()) /
                      fmt::format("nogpm-{}-{}", getpid(), from.filename().string());
  std::ifstream in(from);
  std::ofstream out(to);
  std::string line;
  while (std::getline(in, line)) {
    // A line JSON cannot parse (the recording's NaN) goes through as it is: the
    // lenient reader skips it either way.
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) {
      for (const char* key : kGpmFields) j.erase(key);
      line = j.dump();
    }
    out << line << '\n';
  }
  return to;
}

class WithoutGpm : public ::testing::TestWithParam<const char*> {};

TEST_P(WithoutGpm, NoFixRestsOnWhatOnlyGpmMeasuresAndTheGapIsSaid) {
  const fs::path path = without_gpm(fs::path(GPULENS_SOURCE_DIR) / GetParam());
  const auto trace = read_trace(path.string(), TraceReadOptions{.lenient = true});
  ASSERT_TRUE(trace) << path;
  const Verdict v = build_verdict(*trace, VerdictOptions{});
  ASSERT_FALSE(v.fixes.empty()) << GetParam();
  for (const auto& fix : v.fixes) {
    for (const char* premise : kGpmPremises) {
      EXPECT_EQ(fix.find(premise), std::string::npos)
          << GetParam() << ": \"" << premise << "\" in: " << fix;
    }
  }
  bool gpm_named = false;
  for (const auto& gap : v.evidence_gaps) {
    gpm_named = gpm_named || gap.settle.find("GPM") != std::string::npos;
  }
  EXPECT_TRUE(gpm_named) << GetParam() << ": no evidence gap names GPM as what would settle it";
}

INSTANTIATE_TEST_SUITE_P(RecordedOnHopper, WithoutGpm,
                         ::testing::Values("tests/fixtures/traces/diagnosis-h100.trace.jsonl",
                                           "tests/fixtures/traces/training-h100.trace.jsonl",
                                           "tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl",
                                           "examples/calibration-h100.trace.jsonl"));

}  // namespace
}  // namespace gpulens::verdict

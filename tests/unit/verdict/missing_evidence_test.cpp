// SPDX-License-Identifier: Apache-2.0
// Issue 28's bad input: a recording without GPM (an Ampere GPU, a container that
// NVML denies GPM) must not get a fix whose premise only GPM can check (SM
// coverage, the tensor or math pipes), and the verdict must say what it could
// not judge and what would settle it. The recordings are real H100 and H200
// ones with every GPM field taken out, as an older GPU would have written them.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <string>

#include "core/trace_reader.hpp"
#include "verdict/verdict.hpp"
#include "without_gpm.hpp"

namespace gpulens::verdict {
namespace {

namespace fs = std::filesystem;

// Fixes that rest on SM coverage or on what the math pipes do: without GPM
// nothing in the recording can support them.
constexpr std::array kGpmPremises = {"more blocks",  "SMs busy",  "split-K",
                                     "tensor cores", "math pipe", "TF32",
                                     "bf16",         "MPS",       "occupancy"};

class WithoutGpm : public ::testing::TestWithParam<const char*> {};

TEST_P(WithoutGpm, NoFixRestsOnWhatOnlyGpmMeasuresAndTheGapIsSaid) {
  const fs::path path = testing::without_gpm(fs::path(GPULENS_SOURCE_DIR) / GetParam());
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

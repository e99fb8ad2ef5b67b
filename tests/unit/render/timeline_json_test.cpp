// SPDX-License-Identifier: Apache-2.0
// The diagnosis report as JSON (docs/diagnosis.md): its format and version, each
// GPU's limits, every phase and timeline run with its documented keys, shares
// that add up to one, on the calibration recording.
#include <gtest/gtest.h>

#include <string>

#include "core/trace_reader.hpp"
#include "diagnosis/config.hpp"
#include "diagnosis/timeline.hpp"
#include "render/timeline_output.hpp"

namespace gpulens::render {
namespace {

// The calibration recording's diagnosis, made once per test process.
const diagnosis::DiagnosisReport& json_calibration() {
  static const diagnosis::DiagnosisReport report = [] {
    auto trace =
        read_trace(std::string(GPULENS_SOURCE_DIR) + "/examples/calibration-h100.trace.jsonl");
    EXPECT_TRUE(trace.ok());
    return diagnosis::diagnose_trace(*trace, diagnosis::DiagnosisConfig::defaults());
  }();
  return report;
}

TEST(Report, JsonHasTheDocumentedShape) {
  const auto j = report_to_json(json_calibration());
  EXPECT_EQ(j.at("format"), "gpulens-diagnosis");
  EXPECT_EQ(j.at("version"), 1);
  ASSERT_EQ(j.at("gpus").size(), 1u);
  EXPECT_EQ(j.at("gpus")[0].at("limits").at("sm_count"), 132);
  EXPECT_NEAR(j.at("gpus")[0].at("limits").at("pcie_gbytes_s").get<double>(), 63.0, 0.1);
  ASSERT_GE(j.at("phases").size(), 11u);
  for (const auto& p : j.at("phases")) {
    for (const char* key :
         {"name", "gpu", "start", "end", "state", "shares", "flags", "means", "summary", "fixes"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
    double total = 0;
    for (const auto& [state, share] : p.at("shares").items()) {
      EXPECT_TRUE(diagnosis::state_from_id(state).has_value()) << state;
      total += share.get<double>();
    }
    EXPECT_NEAR(total, 1.0, 0.01);
  }
  ASSERT_FALSE(j.at("timeline").empty());
  for (const auto& run : j.at("timeline")) {
    for (const char* key : {"gpu", "start", "end", "state", "confidence", "flags", "summary",
                            "evidence", "cannot_tell", "fixes"}) {
      EXPECT_TRUE(run.contains(key)) << key;
    }
    EXPECT_LE(run.at("start").get<double>(), run.at("end").get<double>());
  }
  EXPECT_TRUE(j.at("alerts").is_array());
}

}  // namespace
}  // namespace gpulens::render

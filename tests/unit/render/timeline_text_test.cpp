// SPDX-License-Identifier: Apache-2.0
// The diagnosis report as text: verdicts first (states, phases, their fixes),
// the timeline after, on the calibration recording.
#include <gtest/gtest.h>

#include <string>

#include "core/trace_reader.hpp"
#include "diagnosis/config.hpp"
#include "diagnosis/timeline.hpp"
#include "render/timeline_output.hpp"

namespace gpulens::render {
namespace {

// The calibration recording's diagnosis, made once per test process.
const diagnosis::DiagnosisReport& text_calibration() {
  static const diagnosis::DiagnosisReport report = [] {
    auto trace =
        read_trace(std::string(GPULENS_SOURCE_DIR) + "/examples/calibration-h100.trace.jsonl");
    EXPECT_TRUE(trace.ok());
    return diagnosis::diagnose_trace(*trace, diagnosis::DiagnosisConfig::defaults());
  }();
  return report;
}

TEST(Report, TextNamesStatesPhasesAndFixes) {
  const auto text = report_to_text(text_calibration());
  EXPECT_NE(text.find("Phases"), std::string::npos);
  EXPECT_NE(text.find("sm_underused"), std::string::npos);
  EXPECT_NE(text.find("fix: "), std::string::npos);
  EXPECT_NE(text.find("Timeline"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::render

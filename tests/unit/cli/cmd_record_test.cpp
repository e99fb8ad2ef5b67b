// SPDX-License-Identifier: Apache-2.0
// `gpulens record` through the binary: a replay recorded again keeps every
// sample and mark.
#include <gtest/gtest.h>

#include <string>

#include "cli_support.hpp"
#include "core/trace_reader.hpp"

namespace gpulens::cli {
namespace {

using testing::run_gpulens;

const std::string kRecordReplay = "examples/calibration-h100.trace.jsonl";

TEST(CliRecord, ReRecordingAReplayKeepsEverySample) {
  const std::string out = ::testing::TempDir() + "/rerecorded.jsonl";
  const auto r = run_gpulens("record -q --speed 0 --replay " + kRecordReplay + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto original = read_trace(std::string(GPULENS_SOURCE_DIR) + "/" + kRecordReplay);
  auto copy = read_trace(out);
  ASSERT_TRUE(original && copy);
  EXPECT_EQ(copy->samples.size(), original->samples.size());
  EXPECT_EQ(copy->marks.size(), original->marks.size());
}

}  // namespace
}  // namespace gpulens::cli

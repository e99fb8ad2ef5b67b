// SPDX-License-Identifier: Apache-2.0
// dcgm-exporter's fields (issue 48) in a recording: written under their x_ keys,
// read back as the same readings, and an absent one read back with its reason.
#include <gtest/gtest.h>

#include <string>

#include "core/json_format.hpp"
#include "core/trace_reader.hpp"

namespace gpulens {
namespace {

TEST(TraceDcgmFields, WrittenUnderTheirKeysAndReadBack) {
  Sample s;
  s.t = 1.8e9;
  s.gpu = 0;
  s.values.set(Metric::EncUtil, 12);
  s.values.set(Metric::DecUtil, 3);
  s.values.set(Metric::RemappedRowsCorrectable, 2);
  s.values.set(Metric::RemappedRowsUncorrectable, 1);
  s.values.set(Metric::RowRemapFailure, 0);
  s.values.set(Metric::PcieReplays, 4096);
  s.values.set(Metric::NvlinkCrcFlitErrors, 9);
  s.values.set(Metric::NvlinkRecoveryErrors, 1);
  std::string line;
  append_sample_json(line, s);
  for (const char* key :
       {"\"x_enc_util\": 12", "\"x_dec_util\": 3", "\"x_remapped_rows_correctable\": 2",
        "\"x_remapped_rows_uncorrectable\": 1", "\"x_row_remap_failure\": 0",
        "\"x_pcie_replays\": 4096", "\"x_nvlink_crc_flit_errors\": 9",
        "\"x_nvlink_recovery_errors\": 1"}) {
    EXPECT_NE(line.find(key), std::string::npos) << key << " in " << line;
  }
  EXPECT_EQ(line.find("x_nvlink_replay_errors"), std::string::npos);  // absent, not 0

  const std::string header =
      R"({"format": "gpu-trace", "version": 1, "host": "h", "interval_s": 0.1, "devices": )"
      R"([{"index": 0, "name": "NVIDIA H200", "unsupported": )"
      R"({"x_nvlink_replay_errors": "n/a: no active NVLink link on this GPU"}}]})";
  auto trace = read_trace_string(header + "\n" + line + "\n", "dcgm.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_EQ(trace->samples.size(), 1u);
  EXPECT_EQ(trace->samples[0].values, s.values);
  const std::string* why = trace->header.devices[0].unsupported_reason(Metric::NvlinkReplayErrors);
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(*why, "n/a: no active NVLink link on this GPU");
}

// A negative count or a utilization past 100 % is a broken reading, not a number.
TEST(TraceDcgmFields, OutOfRangeReadingsAreDropped) {
  const std::string text =
      R"({"format": "gpu-trace", "version": 1, "host": "h", "interval_s": 0.1, "devices": [{"index": 0}]})"
      "\n"
      R"({"t": 1800000000, "gpu": 0, "x_enc_util": 250, "x_pcie_replays": -3, "x_dec_util": 40})"
      "\n";
  auto trace = read_trace_string(text, "bad.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_EQ(trace->samples.size(), 1u);
  EXPECT_FALSE(trace->samples[0].values.has(Metric::EncUtil));
  EXPECT_FALSE(trace->samples[0].values.has(Metric::PcieReplays));
  EXPECT_EQ(trace->samples[0].get(Metric::DecUtil), 40.0);
}

}  // namespace
}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
// The hand-written JSON of trace lines (json_format.cpp): numbers, string
// escaping, and the layout of one sample line with its processes, allocations
// and the keys a reader kept.
#include "core/json_format.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "diagnosis_support.hpp"

namespace gpulens {
namespace {

std::string number_json(double v) {
  std::string out;
  append_number(out, v);
  return out;
}

std::string string_json(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

TEST(JsonFormat, NumbersAreRoundedToThreeDecimalsAndShortest) {
  EXPECT_EQ(number_json(42), "42");
  EXPECT_EQ(number_json(1.23456), "1.235");
  EXPECT_EQ(number_json(0.5), "0.5");
  EXPECT_EQ(number_json(-2.0004), "-2");
  EXPECT_EQ(number_json(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(number_json(std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonFormat, StringsAreEscaped) {
  EXPECT_EQ(string_json("plain"), "\"plain\"");
  EXPECT_EQ(string_json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(string_json("l1\nl2\r\t"), "\"l1\\nl2\\r\\t\"");
  EXPECT_EQ(string_json(std::string_view("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
}

TEST(JsonFormat, ValidUtf8IsKeptAndStrayBytesBecomeReplacementCharacters) {
  EXPECT_EQ(string_json("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(string_json("a\xff"
                        "b"),
            "\"a\\ufffdb\"");
  EXPECT_EQ(string_json("\xc3"), "\"\\ufffd\"");  // truncated sequence
  const auto parsed = nlohmann::json::parse(string_json("x\xfe\xc3\xa9"));
  EXPECT_EQ(parsed.get<std::string>(), "x\xef\xbf\xbd\xc3\xa9");
}

TEST(JsonFormat, ASampleLineHasTimeGpuAndOnlyTheMetricsRead) {
  Sample s;
  s.t = 1700000000.12345;
  s.gpu = 2;
  s.values.set(Metric::GpuUtil, 87.5);
  s.values.set(Metric::PowerW, 301.2345);
  std::string line;
  append_sample_json(line, s);
  EXPECT_EQ(line, "{\"t\": 1700000000.123, \"gpu\": 2, \"gpu_util\": 87.5, \"power_w\": 301.235}");
}

TEST(JsonFormat, ProcessesCarryOnlyWhatIsKnown) {
  Sample s;
  s.procs = std::vector<ProcessSample>{};
  std::string empty;
  append_sample_json(empty, s);
  EXPECT_EQ(empty, "{\"t\": 0.000, \"gpu\": 0, \"procs\": []}");

  auto p = testing::proc(7, "py\"thon", 1024, std::nullopt, 1, "ctr");
  p.slurm = SlurmJob{};
  p.slurm->job = "123";
  s.procs = std::vector<ProcessSample>{p, testing::proc(8)};
  std::string line;
  append_sample_json(line, s);
  EXPECT_EQ(line,
            "{\"t\": 0.000, \"gpu\": 0, \"procs\": [{\"pid\": 7, \"name\": \"py\\\"thon\", "
            "\"used_mib\": 1024, \"ppid\": 1, \"container\": \"ctr\", \"x_slurm\": {\"job\": "
            "\"123\"}}, {\"pid\": 8, \"name\": \"\"}]}");
}

TEST(JsonFormat, AllocationsAndExtraKeysAreWrittenAfterTheProcesses) {
  Sample s;
  GpuAllocation slurm;
  slurm.scheduler = "slurm";
  slurm.job = "42";
  slurm.since = 12.5;
  GpuAllocation bare;
  bare.since = 1;
  s.allocations = std::vector<GpuAllocation>{slurm, bare};
  s.extra["x_custom"] = nlohmann::json{{"a", 1}};
  std::string line;
  append_sample_json(line, s);
  EXPECT_EQ(line,
            "{\"t\": 0.000, \"gpu\": 0, \"x_allocation\": [{\"scheduler\": \"slurm\", \"job\": "
            "\"42\", \"since\": 12.500}, {\"since\": 1.000}], \"x_custom\": {\"a\":1}}");
  EXPECT_TRUE(nlohmann::json::accept(line));
}

}  // namespace
}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
// `gpulens stream` end to end: the real binary on the bundled and reference
// recordings.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "cli_support.hpp"
#include "core/trace_reader.hpp"

namespace gpulens {
namespace {

using testing::expect_golden;
using testing::run_gpulens;

const std::string kCalibration = "examples/calibration-h100.trace.jsonl";

TEST(CliStream, GoldenTableOnTheCalibrationTrace) {
  const auto r = run_gpulens("stream --replay " + kCalibration + " --speed 0 --utc");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("stream-calibration.txt", r.out);
}

TEST(CliStream, GoldenTablesOnTheTrainingAndMultiGpuTraces) {
  const auto training = run_gpulens(
      "stream --replay tests/fixtures/traces/training-h100.trace.jsonl --speed 0 --utc");
  ASSERT_EQ(training.exit_code, 0) << training.err;
  expect_golden("stream-training.txt", training.out);
  const auto multi = run_gpulens(
      "stream --replay tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl --speed 0 --utc");
  ASSERT_EQ(multi.exit_code, 0) << multi.err;
  expect_golden("stream-multi-gpu.txt", multi.out);
}

TEST(CliStream, GoldenCsvAndJsonOnTheCalibrationTrace) {
  const auto csv = run_gpulens("stream --replay " + kCalibration + " --speed 0 -f csv -c 30");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  expect_golden("stream-calibration-head.csv", csv.out);
  const auto json = run_gpulens("stream --replay " + kCalibration + " --speed 0 -f json -c 30");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_golden("stream-calibration-head.jsonl", json.out);
}

TEST(CliStream, OneSmPhaseShowsFullUtilizationBesideTinySmActivity) {
  // The textbook case: a kernel on 1 of 132 SMs reads 100 % utilization.
  const auto r =
      run_gpulens("stream --replay " + kCalibration + " --speed 0 -f json --no-diagnosis");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto trace = read_trace(std::string(GPULENS_SOURCE_DIR) + "/" + kCalibration);
  ASSERT_TRUE(trace);
  double start = 0, end = 0;
  for (const auto& m : trace->marks) {
    if (m.name == "one_sm:start") start = m.t + 1.0;
    if (m.name == "one_sm:end") end = m.t - 0.2;
  }
  ASSERT_LT(start, end);
  double util = 0, sm = 0;
  int n = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    const double t = j["t"];
    if (t < start || t > end) continue;
    util += j["gpu_util"].get<double>();
    sm += j["sm_active"].get<double>();
    ++n;
  }
  ASSERT_GT(n, 10);
  EXPECT_GE(util / n, 95.0);
  EXPECT_NEAR(sm / n, 0.76, 0.3);
}

TEST(CliStream, ColumnsCanBeChosenAndUnknownOnesAreRefused) {
  const auto r = run_gpulens("stream --replay " + kCalibration +
                             " --speed 0 -c 2 --utc --metrics gpu,util,sm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "#gpu  util sm_act");
  const auto bad = run_gpulens("stream --replay " + kCalibration + " --metrics util,bogus");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown column 'bogus'"), std::string::npos) << bad.err;
}

TEST(CliStream, NoDriverGivesAClearMessageAndExitCode2) {
  if (void* h = dlopen("libnvidia-ml.so.1", RTLD_LAZY)) {
    dlclose(h);
    GTEST_SKIP() << "an NVIDIA driver is installed here";
  }
  const auto r = run_gpulens("stream -c 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("libnvidia-ml.so.1"), std::string::npos) << r.err;
  // The example named is one that exists where this gpulens is installed.
  EXPECT_NE(r.err.find("gpulens stream --replay "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("calibration-h100.trace.jsonl"), std::string::npos) << r.err;
}

TEST(CliStream, BadArgumentsAndBadFilesExplainThemselves) {
  EXPECT_EQ(run_gpulens("stream --interval 0.01 --replay " + kCalibration).exit_code, 2);
  EXPECT_EQ(run_gpulens("frobnicate").exit_code, 2);
  const auto unknown_help = run_gpulens("frobnicate --help");
  EXPECT_EQ(unknown_help.exit_code, 2);
  EXPECT_NE(unknown_help.err.find("'frobnicate' is not a gpulens command"), std::string::npos)
      << unknown_help.err;
  EXPECT_TRUE(unknown_help.out.empty()) << unknown_help.out;
  EXPECT_NE(run_gpulens("strem").err.find("Did you mean 'gpulens stream'?"), std::string::npos);
  const auto help_stream = run_gpulens("help stream");
  EXPECT_EQ(help_stream.exit_code, 0);
  EXPECT_NE(help_stream.out.find("Usage: gpulens stream"), std::string::npos) << help_stream.out;
  EXPECT_EQ(run_gpulens("help").exit_code, 0);
  EXPECT_EQ(run_gpulens("help frobnicate").exit_code, 0);  // the main help, as for plain help
  const auto usage = run_gpulens("stream --help");
  EXPECT_NE(usage.out.find("Usage: gpulens stream"), std::string::npos) << usage.out;
  EXPECT_EQ(usage.out.find("{false}"), std::string::npos) << usage.out;
  EXPECT_EQ(run_gpulens("").exit_code, 2);
  const auto help = run_gpulens("stream --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--replay"), std::string::npos);
  const auto missing = run_gpulens("stream --replay /nonexistent.jsonl");
  EXPECT_EQ(missing.exit_code, 2);
}

TEST(CliStream, MalformedTraceNamesTheLine) {
  const std::string path = ::testing::TempDir() + "/bad.jsonl";
  std::ofstream(path) << R"({"format": "gpu-trace", "version": 1, "devices": [{"index": 0}]})"
                      << "\n"
                      << R"({"t": 1, "gpu": 0, "gpu_util": 5})"
                      << "\n{oops\n"
                      << R"({"t": 2, "gpu": 0})"
                      << "\n";
  const auto r = run_gpulens("stream --speed 0 --replay " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.jsonl:3: not valid JSON"), std::string::npos) << r.err;
  const auto lenient = run_gpulens("stream --speed 0 --lenient -f csv --replay " + path);
  EXPECT_EQ(lenient.exit_code, 0) << lenient.err;
}

}  // namespace
}  // namespace gpulens

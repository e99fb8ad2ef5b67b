// SPDX-License-Identifier: Apache-2.0
// `gpulens diagnose` end to end through the binary (a build dependency of the
// tests: never skipped): a replayed recording's phases as JSON, and a config with
// an unknown key refused as a usage error that names its line.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace gpulens::cli {
namespace {

const std::string kDiagnoseTraces = std::string(GPULENS_FIXTURES) + "/traces/";
const std::string kDiagnoseCalibration =
    std::string(GPULENS_SOURCE_DIR) + "/examples/calibration-h100.trace.jsonl";

TEST(DiagnoseCli, ReplayJson) {
  const std::string cmd = std::string(GPULENS_BINARY) + " diagnose --replay " + kDiagnoseTraces +
                          "multi-gpu-h200x2.trace.jsonl --format json 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  ASSERT_TRUE(pipe);
  std::string out;
  char buf[4096];
  while (const auto n = fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  const int status = pclose(pipe.release());
  ASSERT_EQ(status, 0) << out.substr(0, 2000);
  const auto j = nlohmann::json::parse(out);
  bool waiting = false;
  for (const auto& p : j.at("phases")) {
    if (p.at("name") == "imbalanced_rank0_busy" && p.at("gpu") == 1) {
      waiting = p.at("state") == "waiting_on_peer";
    }
  }
  EXPECT_TRUE(waiting);
}

TEST(DiagnoseCli, BadConfigIsAUsageError) {
  const std::string bad = ::testing::TempDir() + "bad_alerts.toml";
  FILE* f = std::fopen(bad.c_str(), "w");
  ASSERT_TRUE(f);
  std::fputs("[alerts.stalled]\nsm_activ_max = 3\n", f);
  std::fclose(f);
  const std::string cmd = std::string(GPULENS_BINARY) + " diagnose --replay " +
                          kDiagnoseCalibration + " --config " + bad + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  char buf[4096];
  while (const auto n = fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  const int status = pclose(pipe.release());
  EXPECT_NE(out.find("sm_activ_max"), std::string::npos) << out;
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(out.find("bad_alerts.toml:2:"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpulens::cli

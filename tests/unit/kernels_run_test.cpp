// `gpulens run --kernels` with no GPU: a job that never starts CUDA, and a job
// whose CUPTI cannot be loaded, run exactly as without --kernels (same output,
// same exit status), and the report says why there is no kernel view.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace gpulens {
namespace {

using testing::read_file;
using testing::run_gpulens;

const std::string kReplay = "--replay examples/calibration-h100.trace.jsonl --speed 0";

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/kernels_run_" + std::to_string(getpid()) + "_" + name;
}

nlohmann::json kernels_section(const std::string& report_path) {
  const auto j = nlohmann::json::parse(read_file(report_path), nullptr, false);
  if (j.is_discarded() || !j.contains("kernels")) return {};
  return j["kernels"];
}

TEST(KernelsRun, AJobWithoutCudaRunsUnchanged) {
  const std::string report = temp_path("nocuda.json");
  const auto r = run_gpulens("run --kernels -q " + kReplay + " -o '" + report +
                             "' -- sh -c 'echo plain output; exit 3'");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "plain output\n");
  const auto k = kernels_section(report);
  ASSERT_FALSE(k.is_null()) << read_file(report);
  EXPECT_FALSE(k["available"].get<bool>());
  // Where the library was built the job simply never started CUDA; elsewhere
  // --kernels says it was not built. Either way the report says which.
  const std::string status = k["status"];
  EXPECT_TRUE(status == "no_cuda" || status == "not_built") << status;
  ASSERT_FALSE(k["notes"].empty());
  std::remove(report.c_str());
}

#ifdef GPULENS_KERNELS_FAKE_JOB
TEST(KernelsRun, AJobWhoseCuptiCannotBeLoadedRunsUnchanged) {
  const std::string report = temp_path("nocupti.json");
  const auto r = run_gpulens("run --kernels -q " + kReplay + " -o '" + report +
                             "' -- env GPULENS_CUPTI=/nonexistent/libcupti.so.13 '" +
                             GPULENS_KERNELS_FAKE_JOB + "' 7");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "fake cuda job output\n");
  const auto k = kernels_section(report);
  ASSERT_FALSE(k.is_null()) << read_file(report);
  EXPECT_FALSE(k["available"].get<bool>());
  EXPECT_EQ(k["status"], "no_cupti");
  ASSERT_FALSE(k["notes"].empty());
  EXPECT_NE(k["notes"][0].get<std::string>().find("libcupti was not found"), std::string::npos)
      << k["notes"];
  std::remove(report.c_str());
}

TEST(KernelsRun, AnotherToolHoldingTheInjectionPointIsSaid) {
  const std::string report = temp_path("taken.json");
  // With CUDA_INJECTION64_PATH already set (Nsight Systems), gpulens leaves it.
  const std::string cmd = "cd '" + std::string(GPULENS_SOURCE_DIR) +
                          "' && CUDA_INJECTION64_PATH=/opt/other/libinject.so '" + GPULENS_BINARY +
                          "' run --kernels -q " + kReplay + " -o '" + report +
                          "' -- sh -c 'echo \"$CUDA_INJECTION64_PATH\"' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[256] = {};
  const size_t n = fread(buf, 1, sizeof buf - 1, p);
  EXPECT_EQ(pclose(p), 0);
  EXPECT_EQ(std::string(buf, n), "/opt/other/libinject.so\n");
  const auto k = kernels_section(report);
  EXPECT_EQ(k["status"], "injection_taken");
  std::remove(report.c_str());
}
#endif

}  // namespace
}  // namespace gpulens

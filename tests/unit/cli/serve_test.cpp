// SPDX-License-Identifier: Apache-2.0
// The end-to-end scripts of tests/e2e, run from ctest: each starts the real
// gpulens binary (and Prometheus or Chromium), and skips with a clear message
// when a tool is missing (exit code 77).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

struct ScriptResult {
  int code = -1;
  std::string output;
};

ScriptResult run_script(const std::string& script, const std::string& args = "") {
  // fmt rather than a chain of string + (GCC 12 at -O3 warns falsely on those).
  const std::string cmd =
      fmt::format("cd '{}' && GPULENS='{}' timeout 240 bash tests/e2e/{} {} 2>&1 </dev/null",
                  GPULENS_SOURCE_DIR, GPULENS_BINARY, script, args);
  ScriptResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

void expect_passes(const std::string& script, const std::string& args = "") {
  const auto r = run_script(script, args);
  if (r.code == 77) GTEST_SKIP() << r.output;
  EXPECT_EQ(r.code, 0) << script << " " << args << ":\n" << r.output;
  std::printf("%s", r.output.c_str());
}

TEST(ServerE2e, PrometheusScrapesTheTracesValues) {
  expect_passes("prometheus.sh", "native");
}

TEST(ServerE2e, PrometheusScrapesDcgmExporterNames) {
  expect_passes("prometheus.sh", "dcgm");
}

TEST(ServerE2e, DashboardInHeadlessChromium) {
  // The screenshot is kept beside the binary for people (and CI) to look at.
  const auto dir = std::filesystem::path(GPULENS_BINARY).parent_path() / "e2e";
  std::filesystem::create_directories(dir);
  expect_passes("dashboard.sh", fmt::format("'{}'", (dir / "dashboard.png").string()));
}

TEST(ServerE2e, BasicAuthAndTls) {
  expect_passes("auth_tls.sh");
}

TEST(ServerE2e, StoreSurvivesKillNine) {
  expect_passes("store_crash.sh");
}

}  // namespace

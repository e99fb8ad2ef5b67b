// SPDX-License-Identifier: Apache-2.0
// `gpulens serve` (cmd_serve.cpp) through the binary: the password hash it
// makes, the limits and settings it refuses before starting, and a replay
// served to its end with its history written or left out, and the warning for
// a listener beyond this machine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cli_support.hpp"
#include "server_support.hpp"
#include "store/history_query.hpp"

namespace gpulens::cli {
namespace {

using testing::run_gpulens;

const std::string kServeReplay =
    "serve --replay examples/calibration-h100.trace.jsonl --speed 0 --exit-at-end ";

// `printf INPUT | gpulens serve --hash-password`: stdout, and the exit code.
testing::CommandResult serve_hash_password(const std::string& input) {
  const std::string cmd =
      "printf '" + input + "' | '" + GPULENS_BINARY + "' serve --hash-password 2>/dev/null";
  testing::CommandResult result;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.out.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

TEST(CliServe, HashPasswordPrintsABcryptHashOfStdin) {
  const auto r = serve_hash_password("correct horse\\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.out.starts_with("$2")) << r.out;
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.out.find("correct horse"), std::string::npos);
  const auto empty = run_gpulens("serve --hash-password");  // stdin is /dev/null
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("an empty password is not allowed"), std::string::npos) << empty.err;
}

TEST(CliServe, BadLimitsAreRefusedBeforeAnythingStarts) {
  const auto raw = run_gpulens(kServeReplay + "--history-raw forever");
  EXPECT_EQ(raw.exit_code, 2);
  EXPECT_NE(raw.err.find("--history-raw/--history-rollup take durations"), std::string::npos)
      << raw.err;
  EXPECT_EQ(run_gpulens(kServeReplay + "--history-rollup 0s").exit_code, 2);
  const auto timeout = run_gpulens(kServeReplay + "--request-timeout 10ms");
  EXPECT_EQ(timeout.exit_code, 2);
  EXPECT_NE(timeout.err.find("--request-timeout takes a duration from 100ms to 1h"),
            std::string::npos)
      << timeout.err;
  const auto config = run_gpulens(kServeReplay + "--config /nonexistent/gpulens.toml");
  EXPECT_EQ(config.exit_code, 2) << config.err;
}

TEST(CliServe, AReplayIsServedToItsEndWithItsHistory) {
  const std::string dir = testing::scratch_dir("cmd_serve");
  const std::string history = dir + "/history.db";
  const auto r = run_gpulens(kServeReplay + "--listen 127.0.0.1:0 --history " + history);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("serving 1 GPU(s) from"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(TLS off, basic auth off)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("listening beyond this machine"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("history disabled"), std::string::npos) << r.err;
  store::HistoryReader reader(history);
  const auto range = reader.range();
  ASSERT_TRUE(range.ok()) << range.error().message;
  EXPECT_TRUE(range->raw_oldest.has_value());
}

TEST(CliServe, WithoutHistoryOrBeyondLoopbackItSaysSo) {
  const auto r = run_gpulens(kServeReplay + "--listen 0.0.0.0:0 --no-history");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("history disabled (--no-history)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("listening beyond this machine without TLS"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpulens::cli

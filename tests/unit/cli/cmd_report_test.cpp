// SPDX-License-Identifier: Apache-2.0
// `gpulens report`'s command line through the binary: a recording or a range of
// the agent's history, not both; times it cannot read, a range that ends before
// it starts and a history that is not there, each refused in words.
#include <gtest/gtest.h>

#include <string>

#include "cli_support.hpp"

namespace gpulens::cli {
namespace {

using testing::run_gpulens;

TEST(ReportFromHistoryCli, UsageErrorsAndMissingHistory) {
  auto r = run_gpulens("report --from yesterday");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--from 'yesterday' is not a time"), std::string::npos) << r.err;

  r = run_gpulens("report --from -1h --to -2h --db /nonexistent/h.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("must be before --to"), std::string::npos) << r.err;

  r = run_gpulens("report --from -1h --db /nonexistent/gpulens/history.db");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no history database at /nonexistent/gpulens/history.db"), std::string::npos)
      << r.err;

  r = run_gpulens("report tests/fixtures/traces/training-h100.trace.jsonl --from -1h");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not both"), std::string::npos) << r.err;

  r = run_gpulens("report");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--from -2h"), std::string::npos) << r.err;

  r = run_gpulens("report tests/fixtures/traces/training-h100.trace.jsonl --db x.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("add --from"), std::string::npos) << r.err;

  r = run_gpulens("report --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option : {"--from", "--to", "--history", "--db", "RFC 3339"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  }
}

}  // namespace
}  // namespace gpulens::cli

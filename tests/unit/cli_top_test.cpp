// SPDX-License-Identifier: Apache-2.0
// `gpulens top` from the outside: the snapshot (--once) and how it behaves on a pipe.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace gpulens::testing {
namespace {

const std::string kMultiGpu = "tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl";

TEST(CliTop, OnceSnapshotOfAReplay) {
  // 300 ticks in: GPU 0 busy and power-capped, GPU 1 waiting on it.
  const auto r = run_gpulens("top --once --width 120 --count 300 --replay " + kMultiGpu);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("top-once-120.txt", r.out);
}

TEST(CliTop, OnceInAsciiHasNoMultibyteText) {
  const auto r = run_gpulens("top --once --ascii --count 300 --replay " + kMultiGpu);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (unsigned char ch : r.out) EXPECT_LT(ch, 0x80);
  EXPECT_NE(r.out.find("util   [#"), std::string::npos);
}

TEST(CliTop, OnAPipeTopNeedsOnceAndBareGpulensPrintsHelp) {
  const auto top = run_gpulens("top --replay " + kMultiGpu);
  EXPECT_EQ(top.exit_code, 2);
  EXPECT_NE(top.err.find("--once"), std::string::npos) << top.err;
  const auto bare = run_gpulens("");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.out.find("top"), std::string::npos);
  EXPECT_NE(bare.out.find("Usage"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::testing

// SPDX-License-Identifier: Apache-2.0
// `gpulens top` from the outside: the snapshot (--once) and how it behaves on a pipe.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace gpulens::cli {
namespace {

using testing::expect_golden;
using testing::run_gpulens;

const std::string kTopMultiGpu = "tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl";

TEST(CliTop, OnceSnapshotOfAReplay) {
  // 300 ticks in: GPU 0 busy and power-capped, GPU 1 waiting on it.
  const auto r = run_gpulens("top --once --width 120 --count 300 --replay " + kTopMultiGpu);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("top-once-120.txt", r.out);
}

TEST(CliTop, OnceInAsciiHasNoMultibyteText) {
  const auto r = run_gpulens("top --once --ascii --count 300 --replay " + kTopMultiGpu);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (unsigned char ch : r.out) EXPECT_LT(ch, 0x80);
  EXPECT_NE(r.out.find("util   [#"), std::string::npos);
}

TEST(CliTop, OnAPipeTopNeedsOnceAndBareGpulensPrintsHelp) {
  const auto top = run_gpulens("top --replay " + kTopMultiGpu);
  EXPECT_EQ(top.exit_code, 2);
  EXPECT_NE(top.err.find("--once"), std::string::npos) << top.err;
  const auto bare = run_gpulens("");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.out.find("top"), std::string::npos);
  EXPECT_NE(bare.out.find("Usage"), std::string::npos);
}

std::string first_line(const std::string& out) {
  return out.substr(0, out.find('\n'));
}

// The recording runs 54.7 s, from 19:30:33 UTC (1795289433.282) to 19:31:28.
TEST(CliTop, OnceAtAnOffsetShowsThatMomentAndSaysWhich) {
  const auto r = run_gpulens("top --once --width 120 --replay " + kTopMultiGpu + " --at 20s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(first_line(r.out).find("at 19:30:53, 20s into the recording of 55s"), std::string::npos)
      << first_line(r.out);
  // The same moment another way: a clock time, and the duration grammar's sums.
  const auto clock = run_gpulens("top --once --width 120 --replay " + kTopMultiGpu +
                                 " --at 2026-11-21T19:30:53.3Z");
  ASSERT_EQ(clock.exit_code, 0) << clock.err;
  EXPECT_EQ(first_line(clock.out), first_line(r.out));
  const auto sum =
      run_gpulens("top --once --width 120 --replay " + kTopMultiGpu + " --at '15s 5s'");
  ASSERT_EQ(sum.exit_code, 0) << sum.err;
  EXPECT_EQ(first_line(sum.out), first_line(r.out));
  // Another moment, other numbers.
  const auto later = run_gpulens("top --once --width 120 --replay " + kTopMultiGpu + " --at 30s");
  ASSERT_EQ(later.exit_code, 0) << later.err;
  EXPECT_NE(later.out, r.out);
  EXPECT_NE(first_line(later.out).find("at 19:31:03, 30s into the recording of 55s"),
            std::string::npos);
}

TEST(CliTop, OnceWithoutAtSaysItIsTheEndOfTheRecording) {
  const auto r = run_gpulens("top --once --width 120 --replay " + kTopMultiGpu);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(first_line(r.out).find("at 19:31:28, the end of the recording (55s)"),
            std::string::npos)
      << first_line(r.out);
  // Too narrow for the words: the short form.
  const auto narrow = run_gpulens("top --once --width 80 --replay " + kTopMultiGpu + " --at 20s");
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  EXPECT_NE(first_line(narrow.out).find("19:30:53  20s of 55s"), std::string::npos)
      << first_line(narrow.out);
}

TEST(CliTop, AtOutsideTheRecordingOrWithoutOneIsAUsageError) {
  const auto past = run_gpulens("top --once --replay " + kTopMultiGpu + " --at 2m");
  EXPECT_EQ(past.exit_code, 2);
  EXPECT_NE(past.err.find("--at 2m is past its end: the recording runs from "
                          "2026-11-21T19:30:33Z to 2026-11-21T19:31:28Z (55s)"),
            std::string::npos)
      << past.err;
  EXPECT_TRUE(past.out.empty());
  const auto before =
      run_gpulens("top --once --replay " + kTopMultiGpu + " --at 2026-11-21T19:00:00Z");
  EXPECT_EQ(before.exit_code, 2);
  EXPECT_NE(before.err.find("is before its start"), std::string::npos) << before.err;
  const auto junk = run_gpulens("top --once --replay " + kTopMultiGpu + " --at soon");
  EXPECT_EQ(junk.exit_code, 2);
  EXPECT_NE(junk.err.find("give an offset into the recording"), std::string::npos) << junk.err;
  const auto live = run_gpulens("top --once --at 20s");
  EXPECT_EQ(live.exit_code, 2);
  EXPECT_NE(live.err.find("--at picks a moment of a recording: use it with --once --replay FILE"),
            std::string::npos)
      << live.err;
  const auto interactive = run_gpulens("top --replay " + kTopMultiGpu + " --at 20s");
  EXPECT_EQ(interactive.exit_code, 2);
  EXPECT_NE(interactive.err.find("--at picks a moment"), std::string::npos);
  const auto both = run_gpulens("top --once --replay " + kTopMultiGpu + " --at 20s --count 5");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("give one"), std::string::npos);
}

TEST(CliTop, OnceShowsMigInstancesUnderTheirGpu) {
  const auto r = run_gpulens(
      "top --once --width 120 --replay tests/fixtures/traces/mig-synthetic-h100.trace.jsonl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n    MIG GI 1   SM act 44%  occ 33%  tensor 14%  dram 22%\n"
                       "    MIG GI 2   SM act 7.0%"),
            std::string::npos)
      << r.out;
}

TEST(CliTop, HelpExplainsAtAndWhoMayBeSignalled) {
  const auto r = run_gpulens("top --help");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--at"), std::string::npos);
  EXPECT_NE(r.out.find("live only"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::cli

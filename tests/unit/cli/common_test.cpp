// SPDX-License-Identifier: Apache-2.0
// The options every sampling command shares, parsed as people type them: a
// recording or live GPUs, the replay's pace by command, GPU lists, the live-only
// options refused where a command only reads recordings, and the settings of a
// verdict (price, peak, dtype) checked before anything runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/report_setup.hpp"

namespace gpulens::cli {
namespace {

// Parses `args` (after the program's name) into a fresh app with the options.
bool parse_source(sampler::SourceOptions& options, bool offline, std::vector<std::string> args) {
  CLI::App app{"test"};
  add_source_options(app, options, offline);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError&) {
    return false;
  }
  return true;
}

TEST(CliCommon, LiveCommandsReadLiveGpusInRealTime) {
  sampler::SourceOptions o;
  ASSERT_TRUE(parse_source(o, false, {}));
  EXPECT_TRUE(o.replay.empty());
  EXPECT_EQ(o.speed, 1.0);
  EXPECT_TRUE(o.gpm);
  EXPECT_TRUE(o.processes);
  EXPECT_EQ(o.dcgm, "auto");
  sampler::SourceOptions set;
  ASSERT_TRUE(parse_source(set, false,
                           {"--gpus", "0,3", "--interval", "0.5", "--no-gpm", "--no-procs",
                            "--dcgm", "off", "--lenient"}));
  EXPECT_EQ(set.gpus, (std::vector<int>{0, 3}));
  EXPECT_EQ(set.interval_s, 0.5);
  EXPECT_FALSE(set.gpm);
  EXPECT_FALSE(set.processes);
  EXPECT_EQ(set.dcgm, "off");
  EXPECT_TRUE(set.lenient);
}

TEST(CliCommon, OfflineCommandsReadAsFastAsPossibleAndTakeNoLiveOptions) {
  sampler::SourceOptions o;
  ASSERT_TRUE(parse_source(o, true, {"--speed", "4"}));
  EXPECT_EQ(o.speed, 4.0);
  sampler::SourceOptions fresh;
  ASSERT_TRUE(parse_source(fresh, true, {}));
  EXPECT_EQ(fresh.speed, 0.0);
  for (const char* live : {"--interval", "--no-gpm", "--dcgm", "--procfs"}) {
    sampler::SourceOptions x;
    EXPECT_FALSE(parse_source(x, true, {live, "1"})) << live;
  }
}

TEST(CliCommon, ValuesOutOfRangeAreRefused) {
  const std::vector<std::vector<std::string>> bad = {
      {"--speed", "-1"},       {"--interval", "0.05"},
      {"--interval", "7200"},  {"--replay", "/nonexistent/gpulens.trace.jsonl"},
      {"--dcgm", "two words"}, {"--pod-resources-every", "0.1"},
  };
  for (const auto& args : bad) {
    sampler::SourceOptions o;
    EXPECT_FALSE(parse_source(o, false, args)) << args[0] << " " << args[1];
  }
}

TEST(CliCommon, ReportSettingsAreCheckedAsParsed) {
  auto parse = [](ReportSettings& s, std::vector<std::string> args) {
    CLI::App app{"test"};
    add_report_settings_options(app, s);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
      app.parse(reversed);
    } catch (const CLI::ParseError&) {
      return false;
    }
    return true;
  };
  ReportSettings s;
  ASSERT_TRUE(parse(s, {"--price", "2.5", "--peak-tflops", "989", "--dtype", "fp8"}));
  EXPECT_EQ(s.price, 2.5);
  EXPECT_EQ(s.peak_tflops, 989);
  EXPECT_EQ(s.dtype, "fp8");
  ReportSettings none;
  ASSERT_TRUE(parse(none, {}));
  EXPECT_FALSE(none.price.has_value());
  EXPECT_EQ(none.dtype, "bf16");
  ReportSettings bad;
  EXPECT_FALSE(parse(bad, {"--price", "-1"}));
  EXPECT_FALSE(parse(bad, {"--peak-tflops", "0"}));
  EXPECT_FALSE(parse(bad, {"--config", "/nonexistent/alerts.toml"}));
}

}  // namespace
}  // namespace gpulens::cli

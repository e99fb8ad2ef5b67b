// SPDX-License-Identifier: Apache-2.0
// Readings and times out of their physical range (issue 31, item 7): dropped and
// counted at the reader, said in a warning, and never stored wrapped in the
// agent's history (sm_active 1e308 went in as -9.2e16 %; t = 1e18 as INT64_MIN).
#include "core/value_ranges.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/trace_reader.hpp"
#include "server_support.hpp"
#include "store/history_store.hpp"

namespace gpulens {
namespace {

TEST(ValueRanges, PercentagesClampWithinTheToleranceAndDropBeyond) {
  EXPECT_EQ(checked_reading(Metric::SmActive, 42.5), 42.5);
  EXPECT_EQ(checked_reading(Metric::SmActive, 100.5), 100.0);
  EXPECT_EQ(checked_reading(Metric::GpuUtil, -0.4), 0.0);
  EXPECT_FALSE(checked_reading(Metric::SmActive, 100.6));
  EXPECT_FALSE(checked_reading(Metric::GpuUtil, -5));
  EXPECT_FALSE(checked_reading(Metric::SmActive, 1e308));
  EXPECT_FALSE(checked_reading(Metric::SmActive, std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(checked_reading(Metric::PowerW, std::numeric_limits<double>::infinity()));
}

TEST(ValueRanges, EveryUnitHasARangeThatKeepsRealReadings) {
  EXPECT_EQ(checked_reading(Metric::PowerW, 700), 700.0);
  EXPECT_FALSE(checked_reading(Metric::PowerW, -1));
  EXPECT_EQ(checked_reading(Metric::TempC, -10), -10.0);
  EXPECT_FALSE(checked_reading(Metric::TempC, -300));
  EXPECT_EQ(checked_reading(Metric::EnergyMj, 123456789012.0), 123456789012.0);
  EXPECT_FALSE(checked_reading(Metric::EnergyMj, 1e18));  // past 2^53: not exact
  EXPECT_FALSE(checked_reading(Metric::EccCorrected, -1));
  EXPECT_EQ(checked_reading(Metric::MemUsedMib, 81559), 81559.0);
  EXPECT_FALSE(checked_reading(Metric::PcieTxMibs, 1e300));
  EXPECT_EQ(checked_reading(Metric::ClockEventReasons, 0x24), 36.0);
  // Every metric's range is derived from its unit: none is left empty.
  for (const auto& info : all_metrics()) {
    const ValueRange r = value_range(info.id);
    EXPECT_LT(r.min, r.max) << info.key;
  }
}

TEST(ValueRanges, TimesOutsideTheCenturiesAreNotPlausible) {
  EXPECT_TRUE(plausible_time(1795000000.0));
  EXPECT_TRUE(plausible_time(1000.25));
  EXPECT_FALSE(plausible_time(1e18));
  EXPECT_FALSE(plausible_time(1e308));
  EXPECT_FALSE(plausible_time(-1e308));
  EXPECT_FALSE(plausible_time(std::numeric_limits<double>::quiet_NaN()));
}

const std::string kRangesHeader =
    R"({"format": "gpu-trace", "version": 1, "devices": [{"index": 0}]})"
    "\n";

TEST(ValueRanges, TheReaderDropsCountsAndSaysSo) {
  std::string text = kRangesHeader;
  text += R"({"t": 1795000000.0, "gpu": 0, "sm_active": 1e308, "gpu_util": 50})"
          "\n";
  text += R"({"t": 1795000001.0, "gpu": 0, "sm_active": 100.3, "gpu_util": -5})"
          "\n";
  text += R"({"t": 1795000002.0, "gpu": 0, "sm_active": NaN, "gpu_util": 60})"
          "\n";
  text += R"({"t": 1e18, "gpu": 0, "gpu_util": 70})"
          "\n";
  text += R"({"t": -1e308, "gpu": 0, "gpu_util": 70})"
          "\n";
  text += R"({"t": 1e308, "mark": "train:start"})"
          "\n";
  text += R"({"t": 1795000003.0, "gpu": 0, "gpu_util": 80})"
          "\n";
  auto trace = read_trace_string(text, "ranges.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->samples.size(), 4u);  // the two with t = 1e18 and -1e308 are gone
  EXPECT_TRUE(trace->marks.empty());     // and the mark at 1e308
  const auto& s = trace->samples;
  EXPECT_FALSE(s[0].values.has(Metric::SmActive));      // 1e308: dropped
  EXPECT_EQ(s[0].values.get(Metric::GpuUtil), 50.0);    // its neighbour stays
  EXPECT_EQ(s[1].values.get(Metric::SmActive), 100.0);  // within the tolerance: clamped
  EXPECT_FALSE(s[1].values.has(Metric::GpuUtil));       // -5: dropped
  EXPECT_FALSE(s[2].values.has(Metric::SmActive));      // NaN: not measured
  for (const auto& sample : s) EXPECT_GT(sample.t, 1.7e9);
  const std::string warnings = fmt::format("{}", fmt::join(trace->warnings, "\n"));
  EXPECT_NE(warnings.find("ranges.jsonl: 2 reading(s) out of range dropped (first: line 2, "
                          "sm_active 1e+308)"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("ranges.jsonl: 3 line(s) with a time outside 1900..2200 dropped "
                          "(first: line 5, t 1e+18)"),
            std::string::npos)
      << warnings;
}

TEST(ValueRanges, AStringWhereANumberBelongsIsAMalformedLine) {
  std::string text = kRangesHeader;
  text += R"({"t": 1795000000.0, "gpu": 0, "sm_active": "nan"})"
          "\n";
  text += R"({"t": 1795000001.0, "gpu": 0, "sm_active": "1e308"})"
          "\n";
  text += R"({"t": 1795000002.0, "gpu": 0, "sm_active": 30})"
          "\n";
  EXPECT_FALSE(read_trace_string(text, "strings.jsonl").ok());
  auto lenient = read_trace_string(text, "strings.jsonl", TraceReadOptions{true});
  ASSERT_TRUE(lenient.ok());
  ASSERT_EQ(lenient->samples.size(), 1u);
  EXPECT_EQ(lenient->samples[0].values.get(Metric::SmActive), 30.0);
}

// The history's own guard, for samples made in memory (a live source, a test):
// an out-of-range reading is NULL and an implausible time is no row; nothing wraps.
TEST(ValueRanges, TheHistoryNeverStoresAWrappedNumber) {
  store::StoreOptions options;
  options.path = gpulens::testing::scratch_dir("ranges") + "/history.db";
  auto opened = store::HistoryStore::open(options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto& history = *opened;
  std::vector<store::StoredSample> samples;
  for (double t : {1e18, -1e308, 1e308}) {
    store::StoredSample s;
    s.t = t;
    s.values.set(Metric::GpuUtil, 50);
    samples.push_back(s);
  }
  store::StoredSample s;
  s.t = 1795000000.0;
  s.values.set(Metric::SmActive, 1e308);
  s.values.set(Metric::GpuUtil, 100.4);
  s.values.set(Metric::EnergyMj, -5);
  s.values.set(Metric::PowerW, 300);
  samples.push_back(s);
  ASSERT_TRUE(history.write(samples, {}).ok());

  EXPECT_EQ(*history.db().query_int("SELECT COUNT(*) FROM samples"), 1);
  EXPECT_EQ(*history.db().query_int("SELECT t_ms FROM samples"), 1795000000000);
  auto& db = history.db();
  EXPECT_EQ(*db.query_int("SELECT COUNT(*) FROM samples WHERE sm_active IS NULL"), 1);
  EXPECT_EQ(*db.query_int("SELECT COUNT(*) FROM samples WHERE energy_mj IS NULL"), 1);
  const auto util_scale = *history.columns().scale[index_of(Metric::GpuUtil)];
  EXPECT_EQ(*db.query_int("SELECT gpu_util FROM samples"), std::llround(100 * util_scale));
  const auto power_scale = *history.columns().scale[index_of(Metric::PowerW)];
  EXPECT_EQ(*db.query_int("SELECT power_w FROM samples"), std::llround(300 * power_scale));
}

TEST(ValueRanges, ToStoredRefusesWhatAnInt64CannotHold) {
  EXPECT_EQ(store::to_stored(97.34, 100), 9734);
  EXPECT_FALSE(store::to_stored(1e308, 100));
  EXPECT_FALSE(store::to_stored(-1e308, 1));
  EXPECT_FALSE(store::to_stored(9223372036854775807.0, 1));  // rounds to 2^63
  EXPECT_FALSE(store::to_stored(std::numeric_limits<double>::quiet_NaN(), 1));
  EXPECT_EQ(store::to_stored(-9223372036854775808.0, 1), std::numeric_limits<std::int64_t>::min());
}

}  // namespace
}  // namespace gpulens

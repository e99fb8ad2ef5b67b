// SPDX-License-Identifier: Apache-2.0
// Reading history back (history_query.cpp): metric series from raw samples and
// minutes, where raw samples take over from the minutes, alert events, and a
// reader's errors.
#include "store/history_query.hpp"

#include <gtest/gtest.h>

#include "store_support.hpp"

namespace gpulens::store {
namespace {

using testing::stored_sample;
using testing::StoreTest;

TEST_F(StoreTest, RawSamplesRoundTripAtTheirPrecision) {
  auto store = open();
  StoredSample s = stored_sample(0, 1000.25, 97.34, 0.76, "sm_underused");
  s.values.set(Metric::ClockEventReasons, 0x24);
  ASSERT_TRUE(store.write({s}, {}).ok());
  HistoryReader reader(options_.path);
  HistoryQuery q;
  q.from = 1000;
  q.to = 1001;
  q.step = 1;
  q.metrics = {Metric::GpuUtil, Metric::SmActive, Metric::EnergyMj, Metric::MemUsedMib};
  auto r = reader.history(q);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "raw");
  ASSERT_EQ(r->series.size(), 1u);
  const auto& g = r->series[0];
  ASSERT_EQ(g.t.size(), 1u);
  EXPECT_DOUBLE_EQ(g.t[0], 1000);
  ASSERT_EQ(g.metrics.size(), 4u);
  EXPECT_NEAR(*g.metrics[0].mean[0], 97.34, 1e-9);
  EXPECT_NEAR(*g.metrics[1].mean[0], 0.76, 1e-9);
  EXPECT_NEAR(*g.metrics[2].mean[0], 123456789012.0, 0.5);  // counters keep every digit
  EXPECT_FALSE(g.metrics[3].mean[0].has_value());           // not measured: null, not 0
}

TEST_F(StoreTest, AlertEventsAreKept) {
  auto store = open();
  diagnosis::AlertEvent e;
  e.rule = "stalled";
  e.gpu = 1;
  e.t = 500;
  e.since = 400;
  e.message = "stuck";
  ASSERT_TRUE(store.write({}, {e}).ok());
  HistoryReader reader(options_.path);
  auto events = reader.alert_events(0, 1000, 10);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].rule, "stalled");
  EXPECT_EQ((*events)[0].kind, "firing");
}

TEST_F(StoreTest, ReaderReportsAMissingFile) {
  HistoryReader reader(dir_ + "/absent.db");
  auto r = reader.timeline(0, 1, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("absent.db"), std::string::npos);
}

TEST(HistoryQuery, RawSamplesTakeOverWhereTheRangeAsksForThem) {
  DataRange range;
  range.raw_oldest = 1000;
  range.rollup_newest = 900;
  // Steps of a minute or more read minutes up to the last one rolled up.
  EXPECT_EQ(raw_split(range, 0, 2000, 60), 960);
  // Shorter steps read raw samples from the oldest one kept.
  EXPECT_EQ(raw_split(range, 0, 2000, 1), 1000);
  // Always within the range asked for.
  EXPECT_EQ(raw_split(range, 1500, 2000, 1), 1500);
  EXPECT_EQ(raw_split(range, 0, 500, 60), 500);
  // Nothing rolled up: raw from the start; no raw sample: minutes to the end.
  EXPECT_EQ(raw_split(DataRange{}, 100, 200, 60), 100);
  EXPECT_EQ(raw_split(DataRange{}, 100, 200, 1), 200);
}

TEST_F(StoreTest, TheDataRangeSpansRawSamplesAndMinutes) {
  auto store = open();
  HistoryReader reader(options_.path);
  auto empty = reader.range();
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_FALSE(empty->raw_oldest.has_value());
  EXPECT_FALSE(empty->rollup_newest.has_value());
  std::vector<StoredSample> batch;
  for (int i = 0; i < 130; ++i) batch.push_back(stored_sample(0, 600.5 + i, 10, 5, "idle"));
  ASSERT_TRUE(store.write(batch, {}).ok());
  ASSERT_TRUE(store.roll_up_closed().ok());
  auto r = reader.range();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_DOUBLE_EQ(*r->raw_oldest, 600.5);
  EXPECT_DOUBLE_EQ(*r->raw_newest, 729.5);
  EXPECT_DOUBLE_EQ(*r->rollup_oldest, 600);
  EXPECT_DOUBLE_EQ(*r->rollup_newest, 660);
}

TEST_F(StoreTest, HistoryKeepsOnlyTheGpusAskedFor) {
  auto store = open();
  ASSERT_TRUE(store
                  .write({stored_sample(0, 1000, 10, 5, "idle"),
                          stored_sample(1, 1000, 90, 80, "compute_bound")},
                         {})
                  .ok());
  HistoryReader reader(options_.path);
  HistoryQuery q;
  q.from = 1000;
  q.to = 1001;
  q.step = 1;
  q.metrics = {Metric::GpuUtil};
  auto all = reader.history(q);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->series.size(), 2u);
  q.gpus = {1};
  auto one = reader.history(q);
  ASSERT_TRUE(one.ok()) << one.error().message;
  ASSERT_EQ(one->series.size(), 1u);
  EXPECT_EQ(one->series[0].gpu, 1);
  EXPECT_NEAR(*one->series[0].metrics[0].mean[0], 90, 1e-9);
}

}  // namespace
}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
// The state timeline (history_timeline.cpp): runs of one state per GPU, from raw
// samples for short ranges and from minutes for long ones.
#include <gtest/gtest.h>

#include "store/history_query.hpp"
#include "store_support.hpp"

namespace gpulens::store {
namespace {

using testing::stored_sample;
using testing::StoreTest;

TEST_F(StoreTest, TimelineMergesRunsFromRawAndFromMinutes) {
  auto store = open();
  std::vector<StoredSample> batch;
  for (int i = 0; i < 240; ++i) {
    batch.push_back(stored_sample(0, 600 + i, 0, 0, i < 120 ? "idle" : "compute_bound"));
  }
  ASSERT_TRUE(store.write(batch, {}).ok());
  ASSERT_TRUE(store.roll_up_closed(true).ok());
  HistoryReader reader(options_.path);
  auto raw = reader.timeline(600, 900, {});
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_EQ(raw->source, "raw");
  ASSERT_EQ(raw->runs.size(), 2u);
  EXPECT_EQ(raw->runs[0].state, "idle");
  EXPECT_DOUBLE_EQ(raw->runs[0].start, 600);
  EXPECT_DOUBLE_EQ(raw->runs[0].end, 720);  // until the next run starts
  EXPECT_EQ(raw->runs[1].state, "compute_bound");
  auto minutes = reader.timeline(0, 86400, {});
  ASSERT_TRUE(minutes.ok());
  EXPECT_EQ(minutes->source, "rollup_1m");
  ASSERT_EQ(minutes->runs.size(), 2u);
  EXPECT_DOUBLE_EQ(minutes->runs[0].end, 720);
  EXPECT_DOUBLE_EQ(minutes->runs[1].end, 840);
}

TEST_F(StoreTest, TimelineRunsEndAtASilenceAndKeepToTheirGpu) {
  auto store = open();
  std::vector<StoredSample> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(stored_sample(0, 1000 + i, 0, 0, "idle"));
  // 30 s of silence, then the same state again: a run of its own.
  for (int i = 0; i < 5; ++i) batch.push_back(stored_sample(0, 1034 + i, 0, 0, "idle"));
  for (int i = 0; i < 3; ++i) batch.push_back(stored_sample(1, 1000 + i, 90, 80, "compute_bound"));
  ASSERT_TRUE(store.write(batch, {}).ok());
  HistoryReader reader(options_.path);
  auto r = reader.timeline(900, 1100, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "raw");
  ASSERT_EQ(r->runs.size(), 3u);
  EXPECT_EQ(r->runs[0].gpu, 0);
  EXPECT_DOUBLE_EQ(r->runs[0].start, 1000);
  EXPECT_DOUBLE_EQ(r->runs[0].end, 1004);
  EXPECT_DOUBLE_EQ(r->runs[1].start, 1034);
  EXPECT_EQ(r->runs[2].gpu, 1);
  EXPECT_EQ(r->runs[2].state, "compute_bound");
  auto only = reader.timeline(900, 1100, {1});
  ASSERT_TRUE(only.ok()) << only.error().message;
  ASSERT_EQ(only->runs.size(), 1u);
  EXPECT_EQ(only->runs[0].gpu, 1);
}

}  // namespace
}  // namespace gpulens::store

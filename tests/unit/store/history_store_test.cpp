// SPDX-License-Identifier: Apache-2.0
#include "store/history_store.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "store/history_query.hpp"
#include "store_support.hpp"

namespace gpulens::store {
namespace {

using testing::StoreTest;

StoredSample sample(int gpu, double t, double util, double sm, const std::string& state) {
  return testing::stored_sample(gpu, t, util, sm, state);
}

TEST_F(StoreTest, CreatesVersionedSchemaInWalMode) {
  auto store = open();
  EXPECT_EQ(*store.db().query_int("PRAGMA user_version"), kSchemaVersion);
  auto mode = store.db().prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  ASSERT_TRUE(*mode->step());
  EXPECT_EQ(mode->column_text(0), "wal");
  for (const auto& info : all_metrics()) EXPECT_TRUE(store.columns().scale[index_of(info.id)]);
  EXPECT_TRUE(store.columns().state_codes.contains("compute_bound"));
}

TEST_F(StoreTest, ReopeningIsIdempotent) {
  { auto store = open(); }
  auto again = open();
  EXPECT_EQ(*again.db().query_int("PRAGMA user_version"), kSchemaVersion);
}

TEST_F(StoreTest, RefusesAFileFromANewerVersion) {
  {
    auto store = open();
    ASSERT_TRUE(store.db().exec("PRAGMA user_version = 99").ok());
  }
  auto s = HistoryStore::open(options_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("newer gpulens"), std::string::npos) << s.error().message;
}

TEST_F(StoreTest, RefusesAFileThatIsNotADatabase) {
  std::ofstream(options_.path) << "this is not sqlite, just text that is long enough to matter "
                                  "for the header check of the file format ....................";
  auto s = HistoryStore::open(options_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(options_.path), std::string::npos);
}

TEST_F(StoreTest, CannotCreateGivesAClearError) {
  options_.path = "/proc/gpulens-cannot-exist/history.db";
  auto s = HistoryStore::open(options_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("/proc/gpulens-cannot-exist"), std::string::npos)
      << s.error().message;
}

TEST_F(StoreTest, ReplacingTheSameTimeDoesNotDuplicate) {
  auto store = open();
  ASSERT_TRUE(store.write({sample(0, 10, 50, 20, "idle")}, {}).ok());
  ASSERT_TRUE(store.write({sample(0, 10, 60, 20, "idle")}, {}).ok());
  EXPECT_EQ(*store.db().query_int("SELECT COUNT(*) FROM samples"), 1);
}

TEST_F(StoreTest, MinutesRollUpWhenTheyCloseAndServeLongSteps) {
  auto store = open();
  std::vector<StoredSample> batch;
  for (int i = 0; i < 180; ++i) {
    batch.push_back(
        sample(0, 600 + i, i < 60 ? 10 : 90, i < 60 ? 5 : 80, i < 60 ? "idle" : "compute_bound"));
  }
  ASSERT_TRUE(store.write(batch, {}).ok());
  ASSERT_TRUE(store.roll_up_closed().ok());
  // Minutes 600 and 660 closed; 720 is still open.
  EXPECT_EQ(*store.db().query_int("SELECT COUNT(*) FROM rollup_1m"), 2);
  EXPECT_EQ(*store.db().query_int("SELECT state_idle FROM rollup_1m WHERE minute = 600"), 60);
  ASSERT_TRUE(store.roll_up_closed(/*close_all=*/true).ok());
  EXPECT_EQ(*store.db().query_int("SELECT COUNT(*) FROM rollup_1m"), 3);

  HistoryReader reader(options_.path);
  HistoryQuery q;
  q.from = 600;
  q.to = 780;
  q.step = 60;
  q.metrics = {Metric::GpuUtil};
  q.min_max = true;
  auto r = reader.history(q);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "rollup_1m");
  ASSERT_EQ(r->series.size(), 1u);
  const auto& m = r->series[0].metrics[0];
  ASSERT_EQ(m.mean.size(), 3u);
  EXPECT_NEAR(*m.mean[0], 10, 1e-9);
  EXPECT_NEAR(*m.mean[1], 90, 1e-9);
  EXPECT_NEAR(*m.max[1], 90, 1e-9);

  // A step under a minute reads raw samples.
  q.step = 30;
  r = reader.history(q);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->source, "raw");
  EXPECT_EQ(r->series[0].t.size(), 6u);
}

TEST_F(StoreTest, RetentionDropsOldRawSamplesButKeepsMinutes) {
  options_.raw_retention_s = 3600;
  auto store = open();
  ASSERT_TRUE(store.write({sample(0, 1000, 1, 1, "idle")}, {}).ok());
  ASSERT_TRUE(store.write({sample(0, 1000 + 7200, 1, 1, "idle")}, {}).ok());
  ASSERT_TRUE(store.roll_up_closed(true).ok());
  ASSERT_TRUE(store.enforce_limits().ok());
  EXPECT_EQ(*store.db().query_int("SELECT COUNT(*) FROM samples"), 1);
  EXPECT_EQ(*store.db().query_int("SELECT COUNT(*) FROM rollup_1m"), 2);
}

TEST_F(StoreTest, SizeBoundDropsTheOldestDataFirst) {
  options_.max_bytes = 512 * 1024;
  auto store = open();
  // About 1 MiB of raw samples over six days, in batches as the writer makes
  // them; a batch refused as full fits once room is made.
  for (int day = 0; day < 6; ++day) {
    for (int chunk = 0; chunk < 8; ++chunk) {
      std::vector<StoredSample> batch;
      for (int i = 0; i < 500; ++i) {
        batch.push_back(sample(0, day * 86400.0 + (chunk * 500 + i) * 10, 50, 50, "idle"));
      }
      if (!store.write(batch, {}).ok()) {
        ASSERT_TRUE(store.enforce_limits(/*make_room=*/true).ok());
        ASSERT_TRUE(store.write(batch, {}).ok());
      }
    }
    ASSERT_TRUE(store.enforce_limits().ok());
  }
  EXPECT_LE(store.stats().used_bytes, options_.max_bytes);
  EXPECT_LE(store.stats().file_bytes, options_.max_bytes);
  // The newest data survived; the oldest went.
  EXPECT_EQ(*store.db().query_int("SELECT MAX(t_ms) FROM samples"), (5 * 86400 + 39990) * 1000LL);
  EXPECT_GT(*store.db().query_int("SELECT MIN(t_ms) FROM samples"), 0);
}

}  // namespace
}  // namespace gpulens::store

namespace gpulens::store {
namespace {

// A history file written before gpulens knew the integer pipe has no int_active
// columns. Read as it is, it answers without it; opened for writing, it gains
// the columns, its old rows read int_active as not measured (null, never 0) and
// new rows keep it.
TEST_F(StoreTest, AFileFromBeforeTheIntegerPipeGainsItsColumns) {
  {
    auto store = open();
    ASSERT_TRUE(store.write({sample(0, 1000, 50, 20, "idle")}, {}).ok());
    // Take the file back to what an older gpulens wrote.
    for (const char* sql : {"DROP VIEW samples_view", "ALTER TABLE samples DROP COLUMN int_active",
                            "ALTER TABLE rollup_1m DROP COLUMN int_active_mean",
                            "ALTER TABLE rollup_1m DROP COLUMN int_active_min",
                            "ALTER TABLE rollup_1m DROP COLUMN int_active_max",
                            "DELETE FROM metric_columns WHERE key = 'int_active'"}) {
      const Status s = store.db().exec(sql);
      ASSERT_TRUE(s.ok()) << sql << ": " << s.error().message;
    }
  }
  HistoryQuery q;
  q.from = 1000;
  q.to = 1002;
  q.step = 1;
  q.metrics = {Metric::GpuUtil, Metric::IntActive};
  {
    auto old = HistoryReader(options_.path).history(q);
    ASSERT_TRUE(old.ok()) << old.error().message;
    ASSERT_EQ(old->series.size(), 1u);
    ASSERT_EQ(old->series[0].metrics.size(), 1u) << "a metric the file has no column for";
    EXPECT_NEAR(*old->series[0].metrics[0].mean[0], 50, 1e-9);
  }

  auto store = open();
  EXPECT_TRUE(store.columns().scale[index_of(Metric::IntActive)]);
  EXPECT_EQ(*store.db().query_int(
                "SELECT COUNT(*) FROM pragma_table_info('samples') WHERE name = 'int_active'"),
            1);
  EXPECT_EQ(*store.db().query_int("SELECT COUNT(*) FROM pragma_table_info('rollup_1m') "
                                  "WHERE name LIKE 'int_active_%'"),
            3);
  StoredSample now = sample(0, 1001, 60, 90, "idle");
  now.values.set(Metric::IntActive, 42.25);
  ASSERT_TRUE(store.write({now}, {}).ok());

  auto r = HistoryReader(options_.path).history(q);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->series.size(), 1u);
  const auto& g = r->series[0];
  ASSERT_EQ(g.t.size(), 2u);
  ASSERT_EQ(g.metrics.size(), 2u);
  EXPECT_NEAR(*g.metrics[0].mean[0], 50, 1e-9);
  EXPECT_FALSE(g.metrics[1].mean[0].has_value()) << "the old row: not measured, not 0";
  EXPECT_NEAR(*g.metrics[1].mean[1], 42.25, 1e-9);
}

}  // namespace
}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
// The history file's schema: a new file migrated to the newest version with a
// column per metric at the scale its values are stored in, every older version
// brought up to the newest, a version no gpulens writes (or a newer one) refused
// naming the file, and the SQL pieces the queries are built from.
#include "store/schema.hpp"

#include <gtest/gtest.h>

#include <string>

#include "server_support.hpp"
#include "store/sqlite_db.hpp"

namespace gpulens::store {
namespace {

Database schema_db(const std::string& name) {
  const std::string dir = gpulens::testing::scratch_dir("schema-" + name);
  auto db = Database::open(dir + "/h.db", false, true);
  EXPECT_TRUE(db) << db.error().message;
  return std::move(*db);
}

TEST(Schema, ANewFileGetsTheNewestVersionAndAColumnPerMetric) {
  Database db = schema_db("new");
  EXPECT_EQ(*schema_version(db), 0) << "no gpulens has written to it";
  const auto map = migrate(db);
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(*schema_version(db), kSchemaVersion);
  EXPECT_EQ(static_cast<std::size_t>(kSchemaVersion), migrations().size());
  for (const auto& info : all_metrics()) {
    ASSERT_TRUE(map->scale[index_of(info.id)].has_value()) << info.key;
    EXPECT_EQ(*map->scale[index_of(info.id)], default_scale(info.id)) << info.key;
  }
  EXPECT_FALSE(map->state_codes.empty());
  for (const auto& [id, code] : map->state_codes) EXPECT_EQ(map->state_ids.at(code), id);
  // Read back by a reader, the map is the same; migrating again changes nothing.
  const auto read = read_column_map(db);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->scale, map->scale);
  EXPECT_EQ(read->state_codes, map->state_codes);
  ASSERT_TRUE(migrate(db));
  EXPECT_EQ(*schema_version(db), kSchemaVersion);
}

TEST(Schema, EveryOlderVersionIsBroughtUpToTheNewest) {
  for (int from = 1; from < kSchemaVersion; ++from) {
    Database db = schema_db("v" + std::to_string(from));
    for (int step = 0; step < from; ++step) {
      ASSERT_TRUE(db.exec(migrations()[static_cast<std::size_t>(step)])) << "step " << step;
    }
    ASSERT_TRUE(db.exec("PRAGMA user_version = " + std::to_string(from)));
    const auto map = migrate(db);
    ASSERT_TRUE(map) << "from " << from << ": " << map.error().message;
    EXPECT_EQ(*schema_version(db), kSchemaVersion) << "from " << from;
  }
}

TEST(Schema, VersionsNoGpulensWritesAreRefusedNamingTheFile) {
  Database newer = schema_db("newer");
  ASSERT_TRUE(newer.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1)));
  const auto too_new = schema_version(newer);
  ASSERT_FALSE(too_new);
  EXPECT_NE(too_new.error().message.find(newer.path() + " was written by a newer gpulens"),
            std::string::npos)
      << too_new.error().message;
  EXPECT_FALSE(migrate(newer)) << "a newer file is never migrated down";
  Database negative = schema_db("negative");
  ASSERT_TRUE(negative.exec("PRAGMA user_version = -3"));
  const auto alien = schema_version(negative);
  ASSERT_FALSE(alien);
  EXPECT_NE(alien.error().message.find("it is not a gpulens history file"), std::string::npos)
      << alien.error().message;
}

TEST(Schema, ThePiecesQueriesAreBuiltFrom) {
  EXPECT_EQ(default_scale(Metric::SmActive), 100.0);  // a ratio: hundredths
  EXPECT_EQ(default_scale(Metric::SmClockMhz), 1.0);  // a clock: whole numbers
  EXPECT_EQ(rollup_column(Metric::SmActive, "mean"), "sm_active_mean");
  EXPECT_EQ(state_column("idle"), "state_idle");
  EXPECT_EQ(gpu_filter_clause({}), "");
  EXPECT_EQ(gpu_filter_clause({0, 2}), " AND gpu IN (0,2)");
}

}  // namespace
}  // namespace gpulens::store

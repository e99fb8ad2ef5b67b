// SPDX-License-Identifier: Apache-2.0
// The thin SQLite layer under the history: values bound and read back as stored
// (integers, doubles, text, blobs, NULL), rows walked until the caller stops,
// SQLite's failures sorted into the kinds the agent reacts to, and errors that
// name the file, what was being done and the likely cause.
#include "store/sqlite_db.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "server_support.hpp"

namespace gpulens::store {
namespace {

TEST(SqliteDb, ValuesRoundTripAsStored) {
  const std::string dir = gpulens::testing::scratch_dir("sqlite-values");
  auto db = Database::open(dir + "/t.db", false, true);
  ASSERT_TRUE(db) << db.error().message;
  ASSERT_TRUE(db->exec("CREATE TABLE t (i INTEGER, d REAL, s TEXT, b BLOB, n INTEGER)"));
  auto insert = db->prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)");
  ASSERT_TRUE(insert) << insert.error().message;
  insert->bind(1, std::int64_t{1} << 53);
  insert->bind(2, 0.1);
  insert->bind(3, std::string_view("caf\xc3\xa9"));
  insert->bind_blob(4, std::string_view("\0\x01\xff", 3));
  insert->bind(5, std::optional<std::int64_t>{});
  ASSERT_TRUE(insert->run());
  auto select = db->prepare("SELECT i, d, s, b, n FROM t");
  ASSERT_TRUE(select);
  auto row = select->step();
  ASSERT_TRUE(row && *row);
  EXPECT_EQ(select->column_int(0), std::int64_t{1} << 53);
  EXPECT_EQ(select->column_double(1), 0.1);
  EXPECT_EQ(select->column_text(2), "caf\xc3\xa9");
  EXPECT_EQ(select->column_blob(3), std::string("\0\x01\xff", 3));
  EXPECT_TRUE(select->is_null(4));
  row = select->step();
  ASSERT_TRUE(row);
  EXPECT_FALSE(*row) << "one row only";
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM t"), 1);
}

TEST(SqliteDb, ARowWalkStopsWhenTheCallerSays) {
  const std::string dir = gpulens::testing::scratch_dir("sqlite-walk");
  auto db = Database::open(dir + "/t.db", false, true);
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (i INTEGER); INSERT INTO t VALUES (1), (2), (3), (4)"));
  auto all = db->prepare("SELECT i FROM t ORDER BY i");
  ASSERT_TRUE(all);
  std::vector<std::int64_t> seen;
  ASSERT_TRUE(all->for_each_row([&] { seen.push_back(all->column_int(0)); }));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{1, 2, 3, 4}));
  all->reset();
  seen.clear();
  ASSERT_TRUE(all->for_each_row([&] {
    seen.push_back(all->column_int(0));
    return seen.size() < 2;
  }));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{1, 2}));
}

TEST(SqliteDb, FailuresAreSortedIntoWhatTheAgentDoesAboutThem) {
  EXPECT_EQ(classify_sqlite_code(SQLITE_FULL), DbFailure::Full);
  EXPECT_EQ(classify_sqlite_code(SQLITE_READONLY), DbFailure::ReadOnly);
  EXPECT_EQ(classify_sqlite_code(SQLITE_PERM), DbFailure::ReadOnly);
  EXPECT_EQ(classify_sqlite_code(SQLITE_CANTOPEN), DbFailure::CannotOpen);
  EXPECT_EQ(classify_sqlite_code(SQLITE_NOTADB), DbFailure::Corrupt);
  EXPECT_EQ(classify_sqlite_code(SQLITE_CORRUPT), DbFailure::Corrupt);
  EXPECT_EQ(classify_sqlite_code(SQLITE_LOCKED), DbFailure::Busy);
  EXPECT_EQ(classify_sqlite_code(SQLITE_BUSY_SNAPSHOT), DbFailure::Busy) << "extended codes";
  EXPECT_EQ(classify_sqlite_code(SQLITE_INTERRUPT), DbFailure::Interrupted);
  EXPECT_EQ(classify_sqlite_code(SQLITE_CONSTRAINT), DbFailure::Other);
}

TEST(SqliteDb, ErrorsNameTheFileAndTheLikelyCause) {
  const auto missing = Database::open("/nonexistent/gpulens/h.db", false, false);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/gpulens/h.db"), std::string::npos)
      << missing.error().message;
  const std::string dir = gpulens::testing::scratch_dir("sqlite-errors");
  std::ofstream(dir + "/not.db") << "this is not a database, it is text long enough to "
                                    "be read as a header by SQLite's pager, and more text\n";
  auto text = Database::open(dir + "/not.db", true, false);
  Status read = text ? text->exec("SELECT * FROM sqlite_master") : Status(text.error());
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("not a gpulens history database"), std::string::npos)
      << read.error().message;
  auto db = Database::open(dir + "/t.db", false, true);
  ASSERT_TRUE(db);
  const Status bad = db->exec("SELECT * FROM no_such_table");
  ASSERT_FALSE(bad);
  EXPECT_EQ(db->last_error().kind, DbFailure::Other);
  EXPECT_NE(db->error("query").message.find("cannot query " + dir + "/t.db: no such table"),
            std::string::npos)
      << db->error("query").message;
}

}  // namespace
}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#pragma once
// A thin RAII layer over the SQLite C API: connections, prepared statements and
// errors turned into Result values with words an operator can act on ("disk
// full", "read-only directory") instead of bare SQLite codes.
#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/result.hpp"

namespace gpulens::store {

// Why a database call failed, in the categories the agent reacts to differently.
enum class DbFailure : std::uint8_t {
  Other,
  Full,
  ReadOnly,
  CannotOpen,
  Corrupt,
  Busy,
  Interrupted
};

struct DbError {
  DbFailure kind = DbFailure::Other;
  int code = SQLITE_OK;
  std::string message;
};

DbFailure classify_sqlite_code(int code);
// The last failure on a connection, with the errno behind I/O errors.
DbError describe_failure(sqlite3* db);
// An Error whose message names the file and explains the common causes.
Error describe_error(sqlite3* db, std::string_view path, std::string_view doing);

class Statement;

class Database {
 public:
  Database() = default;
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Opens (creating if asked) the file; `read_only` connections never write.
  static Result<Database> open(const std::string& path, bool read_only, bool create);
  // Opens `path` read-only as immutable (no locks, no WAL, no -shm): the one way
  // to read a WAL-mode file its reader may not write beside, once no writer is
  // live. Needs URI file names, which Debian's SQLite accepts (SQLITE_USE_URI).
  static Result<Database> open_immutable(const std::string& path);

  bool is_open() const { return db_ != nullptr; }
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

  // Runs one or more statements that return no rows.
  Status exec(std::string_view sql);
  Result<Statement> prepare(std::string_view sql);
  // A single integer from a one-row query ("PRAGMA page_count").
  Result<std::int64_t> query_int(std::string_view sql);

  // The failure behind the last error, for callers that react by kind.
  DbError last_error() const;
  // An Error whose message names the file and explains the common causes.
  Error error(std::string_view doing) const;

  // Makes statements running on this connection give up after `limit`
  // (SQLITE_INTERRUPT), so that no HTTP request holds a thread for long.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline);

  // Sets a deadline for one query's statements and clears it when it goes out of
  // scope, whichever way the query returns.
  class DeadlineScope {
   public:
    DeadlineScope(Database& db, std::chrono::steady_clock::duration limit) : db_(db) {
      db_.set_deadline(std::chrono::steady_clock::now() + limit);
    }
    ~DeadlineScope() { db_.set_deadline(std::nullopt); }
    DeadlineScope(const DeadlineScope&) = delete;
    DeadlineScope& operator=(const DeadlineScope&) = delete;

   private:
    Database& db_;
  };

 private:
  static int progress_callback(void* self);
  sqlite3* db_ = nullptr;
  std::string path_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
};

class Statement {
 public:
  Statement() = default;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  void bind(int index, std::int64_t value);
  void bind(int index, double value);
  void bind(int index, std::string_view value);
  // Bytes stored as a BLOB (never read back as text).
  void bind_blob(int index, std::string_view bytes);
  void bind_null(int index);
  void bind(int index, std::optional<std::int64_t> value) {
    if (value)
      bind(index, *value);
    else
      bind_null(index);
  }

  // True when a row is ready, false when done; an error otherwise.
  Result<bool> step();
  // Steps through the rows, calling on_row() while one is ready (its columns are then
  // readable). An on_row that returns bool stops the walk early by returning false.
  // The first error from SQLite ends the walk and is returned.
  template <typename OnRow>
  Status for_each_row(OnRow&& on_row) {
    while (true) {
      auto row = step();
      if (!row) return row.error();
      if (!*row) return ok_status();
      if constexpr (std::is_same_v<std::invoke_result_t<OnRow&>, bool>) {
        if (!on_row()) return ok_status();
      } else {
        on_row();
      }
    }
  }
  // Runs to completion (statements that return no rows).
  Status run();
  void reset();

  bool is_null(int column) const;
  std::int64_t column_int(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;
  // A BLOB column's bytes (a TEXT one's too); empty for NULL.
  std::string column_blob(int column) const;
  std::optional<std::int64_t> column_opt_int(int column) const;
  std::optional<double> column_opt_double(int column) const;
  int column_count() const;

 private:
  // No pointer back to the Database: statements outlive moves of their owner.
  sqlite3_stmt* stmt_ = nullptr;
};

// Quotes an identifier for SQL built from the metric table ("sm_active").
std::string quote_identifier(std::string_view name);

}  // namespace gpulens::store

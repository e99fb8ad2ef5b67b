// SPDX-License-Identifier: Apache-2.0
#include "store/sqlite_db.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
#include <utility>

namespace gpulens::store {

DbFailure classify_sqlite_code(int code) {
  switch (code & 0xff) {  // the primary code; extended codes refine it
    case SQLITE_FULL:
      return DbFailure::Full;
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return DbFailure::ReadOnly;
    case SQLITE_CANTOPEN:
      return DbFailure::CannotOpen;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DbFailure::Corrupt;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return DbFailure::Busy;
    case SQLITE_INTERRUPT:
      return DbFailure::Interrupted;
    case SQLITE_IOERR:
      // An I/O error from a write to a full disk reaches us as IOERR_WRITE/FSYNC
      // on some file systems; the errno tells the real cause.
      return DbFailure::Other;
    default:
      return DbFailure::Other;
  }
}

Database::~Database() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      deadline_(other.deadline_) {
  if (db_ != nullptr) sqlite3_progress_handler(db_, 1000, &Database::progress_callback, this);
}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    deadline_ = other.deadline_;
    if (db_ != nullptr) sqlite3_progress_handler(db_, 1000, &Database::progress_callback, this);
  }
  return *this;
}

Result<Database> Database::open_immutable(const std::string& path) {
  std::string uri = "file:";
  for (const char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#')
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else
      uri += c;
  }
  auto db = open(uri + "?immutable=1", /*read_only=*/true, /*create=*/false);
  if (db) db->path_ = path;  // messages name the file, not the URI
  return db;
}

Result<Database> Database::open(const std::string& path, bool read_only, bool create) {
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (create && !read_only) flags |= SQLITE_OPEN_CREATE;
  // Each connection is used by one thread at a time, guarded by its owner.
  flags |= SQLITE_OPEN_NOMUTEX;
  Database db;
  db.path_ = path;
  const int rc = sqlite3_open_v2(path.c_str(), &db.db_, flags, nullptr);
  if (rc != SQLITE_OK) return db.error("open");
  sqlite3_extended_result_codes(db.db_, 1);
  // The writer and the HTTP readers share the file: wait briefly for a lock
  // rather than failing at once.
  sqlite3_busy_timeout(db.db_, 2000);
  sqlite3_progress_handler(db.db_, 1000, &Database::progress_callback, &db);
  return db;
}

Status Database::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);
  if (rc != SQLITE_OK) return error("run");
  return ok_status();
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return error("prepare a query on");
  return Statement(stmt);
}

Result<std::int64_t> Database::query_int(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) return stmt.error();
  auto row = stmt->step();
  if (!row) return row.error();
  if (!*row) return Error{fmt::format("no result from '{}'", sql)};
  return stmt->column_int(0);
}

DbError describe_failure(sqlite3* db) {
  DbError e;
  if (db == nullptr) {
    e.kind = DbFailure::CannotOpen;
    e.code = SQLITE_CANTOPEN;
    e.message = "not open";
    return e;
  }
  e.code = sqlite3_extended_errcode(db);
  e.kind = classify_sqlite_code(e.code);
  e.message = sqlite3_errmsg(db);
  const int sys = sqlite3_system_errno(db);
  if (e.kind == DbFailure::Other && sys == ENOSPC) e.kind = DbFailure::Full;
  if (e.kind == DbFailure::Other && (sys == EROFS || sys == EACCES)) e.kind = DbFailure::ReadOnly;
  return e;
}

Error describe_error(sqlite3* db, std::string_view path, std::string_view doing) {
  const DbError e = describe_failure(db);
  std::string_view hint;
  switch (e.kind) {
    case DbFailure::Full:
      hint = " (the disk is full, or the database reached --history-max-size)";
      break;
    case DbFailure::ReadOnly:
      hint = " (the directory or file system is read-only, or not writable by this user)";
      break;
    case DbFailure::CannotOpen:
      hint = " (check that the directory exists and is writable by this user)";
      break;
    case DbFailure::Corrupt:
      hint = " (the file is damaged or is not a gpulens history database)";
      break;
    case DbFailure::Interrupted:
      hint = " (the query took too long and was stopped)";
      break;
    default:
      break;
  }
  return Error{fmt::format("cannot {} {}: {}{}", doing, path, e.message, hint)};
}

DbError Database::last_error() const {
  return describe_failure(db_);
}

Error Database::error(std::string_view doing) const {
  return describe_error(db_, path_, doing);
}

void Database::set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
  deadline_ = deadline;
}

int Database::progress_callback(void* self) {
  const auto* db = static_cast<const Database*>(self);
  // Non-zero makes SQLite stop the statement with SQLITE_INTERRUPT.
  return db->deadline_ && std::chrono::steady_clock::now() > *db->deadline_ ? 1 : 0;
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

void Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, static_cast<sqlite3_int64>(value));
}
void Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
}
void Statement::bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
}
void Statement::bind_blob(int index, std::string_view bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
}
void Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
}

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  const char* file = sqlite3_db_filename(db, "main");
  return describe_error(db, file != nullptr ? file : "", "query");
}

Status Statement::run() {
  if (auto done = for_each_row([] {}); !done) return done;
  reset();
  return ok_status();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
std::int64_t Statement::column_int(int column) const {
  return static_cast<std::int64_t>(sqlite3_column_int64(stmt_, column));
}
double Statement::column_double(int column) const {
  return sqlite3_column_double(stmt_, column);
}
std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}
std::string Statement::column_blob(int column) const {
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  if (bytes == nullptr) return {};
  return std::string(bytes, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}
std::optional<std::int64_t> Statement::column_opt_int(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_int(column);
}
std::optional<double> Statement::column_opt_double(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_double(column);
}
int Statement::column_count() const {
  return sqlite3_column_count(stmt_);
}

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#include "store/history_store.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/clock.hpp"
#include "core/trace_reader.hpp"
#include "core/value_ranges.hpp"
#include "store/history_time.hpp"

namespace gpulens::store {

std::optional<std::int64_t> to_stored(double v, double scale) {
  const double scaled = std::round(v * scale);
  // 2^63 is the first double past INT64_MAX; converting it or more is undefined.
  constexpr double kLimit = 9223372036854775808.0;
  if (!std::isfinite(scaled) || scaled >= kLimit || scaled < -kLimit) return std::nullopt;
  return static_cast<std::int64_t>(scaled);
}
double from_stored(std::int64_t v, double scale) {
  return static_cast<double>(v) / scale;
}

namespace {

// The sample columns in table order after the key, for INSERT and SELECT alike.
std::string metric_column_list(const ColumnMap& map, const char* prefix = "") {
  std::string out;
  for (const auto& info : all_metrics()) {
    if (!map.scale[index_of(info.id)]) continue;
    out += fmt::format(", {}{}", prefix, quote_identifier(info.key));
  }
  return out;
}

std::size_t metric_column_count(const ColumnMap& map) {
  return static_cast<std::size_t>(std::count_if(map.scale.begin(), map.scale.end(),
                                                [](const auto& s) { return s.has_value(); }));
}

}  // namespace

Status claim_history_file(const std::string& path) {
  // O_NOFOLLOW: a symlink planted at the path (another user's, in /tmp) is
  // refused, never followed; a new file is created 0600 whatever the umask.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Error{fmt::format("cannot open the history {}: {}", path,
                             errno == ELOOP ? "it is a symbolic link" : std::strerror(errno))};
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  Status status = ok_status();
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    status = Error{fmt::format("the history {} is not a regular file", path)};
  } else if (st.st_uid != ::geteuid()) {
    status = Error{fmt::format("the history {} belongs to another user (uid {})", path, st.st_uid)};
  } else if ((st.st_mode & 077) != 0) {
    ::fchmod(fd, 0600);  // it may hold command lines
  }
  ::close(fd);
  if (!status) return status;
  // SQLite opens PATH-wal and PATH-shm by name: the same rules for those.
  for (const char* suffix : {"-wal", "-shm"}) {
    const std::string side = path + suffix;
    struct stat ss {};
    if (::lstat(side.c_str(), &ss) != 0) continue;  // absent: SQLite creates it like the file
    if (!S_ISREG(ss.st_mode) || ss.st_uid != ::geteuid()) {
      return Error{fmt::format("refusing {}: not a regular file of this user", side)};
    }
  }
  return ok_status();
}

HistoryStore::HistoryStore(Database db, StoreOptions options, ColumnMap columns)
    : db_(std::move(db)), options_(std::move(options)), columns_(std::move(columns)) {}

Result<HistoryStore> HistoryStore::open(const StoreOptions& options) {
  // A missing parent directory is created, as a database in a fresh
  // /var/lib/gpulens would otherwise fail with a puzzling "unable to open".
  const auto parent = std::filesystem::path(options.path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    const bool existed = std::filesystem::exists(parent, ec);
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Error{
          fmt::format("cannot create the history directory {}: {}", parent.string(), ec.message())};
    }
    // The history holds command lines: a directory made for it is private.
    if (!existed) ::chmod(parent.c_str(), 0700);
  }
  if (auto s = claim_history_file(options.path); !s) return s.error();
  auto db = Database::open(options.path, /*read_only=*/false, /*create=*/true);
  if (!db) return db.error();
  // auto_vacuum only takes effect before the first table exists; later it is a
  // no-op, which is what we want for files created by this code anyway.
  if (auto s = db->exec("PRAGMA auto_vacuum = INCREMENTAL"); !s) return s.error();
  auto mode = db->prepare("PRAGMA journal_mode = WAL");
  if (!mode) return mode.error();
  if (auto row = mode->step(); !row) return row.error();
  if (mode->column_text(0) != "wal") {
    return Error{fmt::format("cannot switch {} to WAL mode (file system without shared memory?)",
                             options.path)};
  }
  mode = Statement();
  // NORMAL in WAL mode: a killed process loses nothing committed; a power cut
  // may lose the last commits but never corrupts the file.
  const std::string pragmas = fmt::format(
      "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; "
      "PRAGMA journal_size_limit = {}; PRAGMA wal_autocheckpoint = 1000;",
      std::min<std::int64_t>(options.max_bytes / 8, 64LL << 20));
  if (auto s = db->exec(pragmas); !s) return s.error();
  auto columns = migrate(*db);
  if (!columns) return columns.error();
  auto page_size = db->query_int("PRAGMA page_size");
  if (!page_size) return page_size.error();
  // The hard cap behind the soft limit in enforce_limits(): writes past it fail
  // with SQLITE_FULL instead of filling the disk.
  if (auto s = db->exec(fmt::format("PRAGMA max_page_count = {}",
                                    std::max<std::int64_t>(options.max_bytes / *page_size, 64)));
      !s)
    return s.error();
  HistoryStore store(std::move(*db), options, std::move(*columns));
  if (auto s = store.prepare_statements(); !s) return s.error();
  if (auto s = store.seed_dirty_minutes(); !s) return s.error();
  return store;
}

Status HistoryStore::prepare_statements() {
  const std::size_t n = metric_column_count(columns_);
  std::string params;
  for (std::size_t i = 0; i < n; ++i) params += ", ?";
  auto ins =
      db_.prepare(fmt::format("INSERT OR REPLACE INTO samples (gpu, t_ms, state, throttled{}) "
                              "VALUES (?, ?, ?, ?{})",
                              metric_column_list(columns_), params));
  if (!ins) return ins.error();
  insert_sample_ = std::move(*ins);
  auto ev = db_.prepare(
      "INSERT INTO alert_events (t, gpu, rule, kind, severity, since, message, count) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  if (!ev) return ev.error();
  insert_event_ = std::move(*ev);
  return ok_status();
}

// After a crash the newest minutes may hold raw rows that were never rolled up.
Status HistoryStore::seed_dirty_minutes() {
  auto newest = db_.prepare("SELECT MAX(t_ms) FROM samples");
  if (!newest) return newest.error();
  if (auto row = newest->step(); !row) return row.error();
  if (const auto ms = newest->column_opt_int(0)) newest_t_ = static_cast<double>(*ms) / 1000.0;
  auto rolled = db_.query_int("SELECT COALESCE(MAX(minute), -1) FROM rollup_1m");
  if (!rolled) return rolled.error();
  auto minutes = db_.prepare("SELECT DISTINCT t_ms / 60000 FROM samples WHERE t_ms >= ?");
  if (!minutes) return minutes.error();
  minutes->bind(1, (*rolled + 60) * 1000);
  return minutes->for_each_row([&] { dirty_minutes_.insert(minutes->column_int(0) * 60); });
}

Status HistoryStore::write(const std::vector<StoredSample>& samples,
                           const std::vector<diagnosis::AlertEvent>& events,
                           const std::vector<SlurmJobUse>& slurm,
                           const std::vector<kernels::KernelWindow>& kernel_windows,
                           std::size_t* kernel_windows_kept) {
  if (kernel_windows_kept != nullptr) *kernel_windows_kept = 0;
  if (samples.empty() && events.empty() && slurm.empty() && kernel_windows.empty())
    return ok_status();
  if (auto s = db_.exec("BEGIN IMMEDIATE"); !s) return s;
  auto fail = [this](Status s) {
    (void)db_.exec("ROLLBACK");
    return s;
  };
  for (const auto& sample : samples) {
    // Readers drop such times; a sample made in memory must not wrap t_ms either.
    if (!plausible_time(sample.t)) continue;
    int p = 1;
    insert_sample_.bind(p++, std::int64_t{sample.gpu});
    insert_sample_.bind(p++, to_ms(sample.t));
    if (auto it = columns_.state_codes.find(sample.state); it != columns_.state_codes.end())
      insert_sample_.bind(p++, std::int64_t{it->second});
    else
      insert_sample_.bind_null(p++);
    insert_sample_.bind(p++, std::int64_t{sample.throttled ? 1 : 0});
    for (const auto& info : all_metrics()) {
      const auto& scale = columns_.scale[index_of(info.id)];
      if (!scale) continue;
      // Out of its physical range (a live source's glitch): NULL, never stored.
      const auto v = sample.values.get(info.id);
      const auto ok = v ? checked_reading(info.id, *v) : std::nullopt;
      if (const auto stored = ok ? to_stored(*ok, *scale) : std::nullopt)
        insert_sample_.bind(p++, *stored);
      else
        insert_sample_.bind_null(p++);
    }
    if (auto s = insert_sample_.run(); !s) return fail(s);
    newest_t_ = std::max(newest_t_.value_or(sample.t), sample.t);
    dirty_minutes_.insert(minute_of(sample.t));
  }
  for (const auto& e : events) {
    insert_event_.bind(1, e.t);
    insert_event_.bind(2, std::int64_t{e.gpu});
    insert_event_.bind(3, std::string_view(e.rule));
    insert_event_.bind(4, diagnosis::alert_kind_id(e.kind));
    insert_event_.bind(5, diagnosis::severity_id(e.severity));
    insert_event_.bind(6, e.since);
    insert_event_.bind(7, std::string_view(e.message));
    insert_event_.bind(8, std::int64_t{e.count});
    if (auto s = insert_event_.run(); !s) return fail(s);
  }
  if (auto s = write_slurm_uses(db_, slurm); !s) return fail(s);
  std::size_t kept = 0;
  if (auto s = write_kernel_windows(db_, kernel_windows, &kept); !s) return fail(s);
  if (auto s = db_.exec("COMMIT"); !s) return fail(s);
  if (kernel_windows_kept != nullptr) *kernel_windows_kept = kept;
  return ok_status();
}

Status HistoryStore::write_pods(const std::vector<PodUse>& pods) {
  if (pods.empty()) return ok_status();
  if (auto s = db_.exec("BEGIN IMMEDIATE"); !s) return s;
  if (auto s = write_pod_uses(db_, pods); !s) {
    (void)db_.exec("ROLLBACK");
    return s;
  }
  if (auto s = db_.exec("COMMIT"); !s) {
    (void)db_.exec("ROLLBACK");
    return s;
  }
  return ok_status();
}

Status HistoryStore::write_devices(const TraceHeader& header) {
  auto stmt =
      db_.prepare("INSERT OR REPLACE INTO devices (gpu, uuid, name, info) VALUES (?,?,?,?)");
  if (!stmt) return stmt.error();
  const auto j = header_to_json(header);
  for (const auto& d : j.value("devices", nlohmann::json::array())) {
    stmt->bind(1, d.value("index", std::int64_t{0}));
    stmt->bind(2, std::string_view(d.value("uuid", std::string())));
    stmt->bind(3, std::string_view(d.value("name", std::string())));
    stmt->bind(4, std::string_view(d.dump()));
    if (auto s = stmt->run(); !s) return s;
  }
  auto meta = db_.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('host', ?)");
  if (!meta) return meta.error();
  meta->bind(1, std::string_view(header.host));
  return meta->run();
}

Result<std::vector<StoredSample>> HistoryStore::read_raw(std::int64_t from_ms, std::int64_t to_ms) {
  auto stmt = db_.prepare(
      fmt::format("SELECT gpu, t_ms, state, throttled{} FROM samples WHERE t_ms >= ? AND t_ms < ?",
                  metric_column_list(columns_)));
  if (!stmt) return stmt.error();
  stmt->bind(1, from_ms);
  stmt->bind(2, to_ms);
  std::vector<StoredSample> out;
  const Status rows = stmt->for_each_row([&] {
    StoredSample s;
    s.gpu = static_cast<int>(stmt->column_int(0));
    s.t = static_cast<double>(stmt->column_int(1)) / 1000.0;
    if (const auto code = stmt->column_opt_int(2)) {
      if (auto it = columns_.state_ids.find(static_cast<int>(*code));
          it != columns_.state_ids.end())
        s.state = it->second;
    }
    s.throttled = stmt->column_int(3) != 0;
    int col = 4;
    for (const auto& info : all_metrics()) {
      const auto& scale = columns_.scale[index_of(info.id)];
      if (!scale) continue;
      if (const auto v = stmt->column_opt_int(col++))
        s.values.set(info.id, from_stored(*v, *scale));
    }
    out.push_back(std::move(s));
  });
  if (!rows) return rows.error();
  return out;
}

Status HistoryStore::write_rollups(const std::vector<RollupRow>& rows) {
  std::string cols = "gpu, minute, n, throttled";
  std::string params = "?, ?, ?, ?";
  for (const auto& info : all_metrics()) {
    if (!columns_.scale[index_of(info.id)]) continue;
    for (const char* stat : {"mean", "min", "max"}) {
      cols += ", " + quote_identifier(rollup_column(info.id, stat));
      params += ", ?";
    }
  }
  for (const auto& [id, code] : columns_.state_codes) {
    cols += ", " + quote_identifier(state_column(id));
    params += ", ?";
  }
  auto stmt =
      db_.prepare(fmt::format("INSERT OR REPLACE INTO rollup_1m ({}) VALUES ({})", cols, params));
  if (!stmt) return stmt.error();
  for (const auto& r : rows) {
    int p = 1;
    stmt->bind(p++, std::int64_t{r.gpu});
    stmt->bind(p++, r.minute);
    stmt->bind(p++, std::int64_t{r.n});
    stmt->bind(p++, std::int64_t{r.throttled});
    for (const auto& info : all_metrics()) {
      const auto& scale = columns_.scale[index_of(info.id)];
      if (!scale) continue;
      for (const MetricValues* stat : {&r.mean, &r.min, &r.max}) {
        const auto v = stat->get(info.id);
        if (const auto stored = v ? to_stored(*v, *scale) : std::nullopt)
          stmt->bind(p++, *stored);
        else
          stmt->bind_null(p++);
      }
    }
    for (const auto& [id, code] : columns_.state_codes) {
      const auto it = r.state_counts.find(id);
      stmt->bind(p++, std::int64_t{it == r.state_counts.end() ? 0 : it->second});
    }
    if (auto s = stmt->run(); !s) return s;
  }
  return ok_status();
}

Status HistoryStore::roll_up_closed(bool close_all) {
  if (dirty_minutes_.empty() || !newest_t_) return ok_status();
  const std::int64_t open_minute = minute_of(*newest_t_);
  std::vector<std::int64_t> ready;
  for (auto m : dirty_minutes_) {
    if (m < open_minute || close_all) ready.push_back(m);
  }
  if (ready.empty()) return ok_status();
  if (auto s = db_.exec("BEGIN IMMEDIATE"); !s) return s;
  // Contiguous runs of minutes are read in one query each.
  std::size_t i = 0;
  while (i < ready.size()) {
    std::size_t j = i;
    while (j + 1 < ready.size() && ready[j + 1] == ready[j] + 60) ++j;
    auto raw = read_raw(ready[i] * 1000, (ready[j] + 60) * 1000);
    Status s = raw ? write_rollups(roll_up(*raw)) : Status(raw.error());
    if (!s) {
      (void)db_.exec("ROLLBACK");
      return s;
    }
    i = j + 1;
  }
  if (auto s = db_.exec("COMMIT"); !s) {
    (void)db_.exec("ROLLBACK");
    return s;
  }
  for (auto m : ready) dirty_minutes_.erase(m);
  return ok_status();
}

Status HistoryStore::delete_before(const char* table, const char* column, std::int64_t limit) {
  auto stmt = db_.prepare(fmt::format("DELETE FROM {} WHERE {} < ?", table, column));
  if (!stmt) return stmt.error();
  stmt->bind(1, limit);
  return stmt->run();
}

Result<bool> HistoryStore::drop_oldest(const char* table, const char* column, std::int64_t span) {
  auto oldest = db_.prepare(fmt::format("SELECT MIN({}) FROM {}", column, table));
  if (!oldest) return oldest.error();
  if (auto row = oldest->step(); !row) return row.error();
  const auto min = oldest->column_opt_int(0);
  if (!min) return false;
  if (auto s = delete_before(table, column, *min + span); !s) return s.error();
  return true;
}

std::int64_t HistoryStore::used_bytes() {
  auto pages = db_.query_int("PRAGMA page_count");
  auto free_pages = db_.query_int("PRAGMA freelist_count");
  auto page_size = db_.query_int("PRAGMA page_size");
  if (!pages || !free_pages || !page_size) return 0;
  return (*pages - *free_pages) * *page_size;
}

// Kernel windows are kept as long as raw samples (they are as detailed: one per
// process and GPU every 20 s), counted from the newest window's end rather than
// the newest sample: a replayed recording's samples are of another time than the
// windows jobs send now. But never from later than now: a window's times are its
// sender's word, and one dated 2199 must not expire every other.
Status HistoryStore::expire_kernel_history() {
  auto newest = newest_kernel_window_ms(db_);
  if (!newest) return newest.error();
  if (!*newest) return ok_status();
  const auto now_ms = static_cast<std::int64_t>(unix_now() * 1000.0);
  return expire_kernel_windows(
      db_,
      std::min(**newest, now_ms) - static_cast<std::int64_t>(options_.raw_retention_s * 1000.0));
}

// The oldest hour of kernel windows, when the size bound needs room; false when none.
Result<bool> HistoryStore::drop_oldest_kernel_windows() {
  auto oldest = oldest_kernel_window_ms(db_);
  if (!oldest) return oldest.error();
  if (!*oldest) return false;
  if (auto s = expire_kernel_windows(db_, **oldest + 3600 * 1000); !s) return s.error();
  return true;
}

Status HistoryStore::enforce_limits(bool make_room) {
  if (auto s = expire_kernel_history(); !s) return s;
  if (!newest_t_) return ok_status();
  const double newest = *newest_t_;
  if (auto s = delete_before("samples", "t_ms", to_ms(newest - options_.raw_retention_s)); !s)
    return s;
  const auto rollup_limit = static_cast<std::int64_t>(newest - options_.rollup_retention_s);
  if (auto s = delete_before("rollup_1m", "minute", rollup_limit); !s) return s;
  if (auto s = delete_before("alert_events", "t", rollup_limit); !s) return s;
  // A job is kept as long as the minutes that judge it (a few hundred bytes per
  // job and GPU); past the size bound's drops its row says what is gone.
  if (auto s = expire_slurm_uses(db_, rollup_limit * 1000); !s) return s;
  if (auto s = expire_pod_uses(db_, rollup_limit * 1000); !s) return s;
  // Over 90 % of the bound: give up the oldest raw samples an hour at a time,
  // then the oldest rollups a day at a time, until under 80 %.
  // After a write failed for want of space, make room for a whole batch.
  if (make_room || used_bytes() > options_.max_bytes / 10 * 9) {
    const auto low = options_.max_bytes / 10 * (make_room ? 6 : 8);
    for (int round = 0; round < 100000 && used_bytes() > low; ++round) {
      // Raw samples and kernel windows are the detail of the same hours: both go.
      auto dropped = drop_oldest("samples", "t_ms", 3600 * 1000);
      if (dropped) {
        auto kernels = drop_oldest_kernel_windows();
        if (!kernels) return kernels.error();
        dropped = *dropped || *kernels;
      }
      if (dropped && !*dropped) dropped = drop_oldest("rollup_1m", "minute", 86400);
      if (!dropped) return dropped.error();
      if (!*dropped) break;
    }
  }
  // Hand freed pages back to the file system so the bound holds on disk too.
  return db_.exec("PRAGMA incremental_vacuum");
}

Status HistoryStore::checkpoint() {
  return db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

StoreStats HistoryStore::stats() {
  StoreStats s;
  std::error_code ec;
  const auto size = std::filesystem::file_size(options_.path, ec);
  if (!ec) s.file_bytes = static_cast<std::int64_t>(size);
  const auto wal = std::filesystem::file_size(options_.path + "-wal", ec);
  if (!ec) s.wal_bytes = static_cast<std::int64_t>(wal);
  s.used_bytes = used_bytes();
  s.newest_t = newest_t_;
  return s;
}

}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#include "store/history_trace.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include "core/clock_reasons.hpp"
#include "core/duration.hpp"
#include "store/history_store.hpp"

namespace gpulens::store {
namespace {

// ---- opening the file ----

// The first read: the schema version, then the column map. A file that is not
// SQLite, or SQLite without gpulens' tables, says so.
Result<OpenedHistory> read_schema(Database& db, const std::string& path) {
  auto version = schema_version(db);
  if (!version) return version.error();
  if (*version == 0)
    return Error{fmt::format("{} is not a gpulens history database (no history schema)", path)};
  auto columns = read_column_map(db);
  if (!columns) return columns.error();
  return OpenedHistory{Database(), std::move(*columns), *version};
}

// Read-only, so a report never writes the agent's file. A read-only reader of a
// WAL file needs the -wal and -shm files: while the agent runs they exist; after
// it stopped cleanly they are gone, and a user who may read but not write the
// directory cannot create them. Then no writer is live, and the file is read as
// immutable (no locking, no WAL). That needs URI file names, which Debian's SQLite
// accepts (SQLITE_USE_URI); where it does not, the first error stands.
Result<OpenedHistory> open_history(const std::string& path) {
  auto db = Database::open(path, /*read_only=*/true, /*create=*/false);
  if (!db) return db.error();
  auto opened = read_schema(*db, path);
  if (opened) {
    opened->db = std::move(*db);
    return opened;
  }
  std::error_code ec;
  if (std::filesystem::exists(path + "-wal", ec)) return opened.error();
  auto frozen = Database::open_immutable(path);
  if (!frozen) return opened.error();
  auto again = read_schema(*frozen, path);
  if (!again) return opened.error();
  again->db = std::move(*frozen);
  return again;
}

// ---- reading ----

std::int64_t ms(double t) {
  return std::llround(t * 1000);
}

// Cumulative counters: a minute's reading at its end is its max, so that the
// difference between minutes is what was counted in between.
bool is_counter(Metric m) {
  switch (m) {
    case Metric::EnergyMj:
    case Metric::EccCorrected:
    case Metric::EccUncorrected:
    case Metric::RemappedRowsCorrectable:
    case Metric::RemappedRowsUncorrectable:
    case Metric::RowRemapFailure:  // a flag that stays set: the minute's max says it was
    case Metric::PcieReplays:
    case Metric::NvlinkCrcFlitErrors:
    case Metric::NvlinkCrcDataErrors:
    case Metric::NvlinkReplayErrors:
    case Metric::NvlinkRecoveryErrors:
      return true;
    default:
      return false;
  }
}

// The host and the wanted devices into `header`; every GPU the file names into `all`.
Status read_devices(Database& db, const std::vector<int>& gpus, TraceHeader& header,
                    std::set<int>& all) {
  auto host = db.prepare("SELECT value FROM meta WHERE key = 'host'");
  if (!host) return host.error();
  auto row = host->step();
  if (!row) return row.error();
  if (*row) header.host = host->column_text(0);
  auto stmt = db.prepare("SELECT gpu, uuid, name, info FROM devices ORDER BY gpu");
  if (!stmt) return stmt.error();
  // The agent stored each device as the trace header writes it: parse it the same way.
  nlohmann::json j = {
      {"format", "gpu-trace"}, {"version", 1}, {"devices", nlohmann::json::array()}};
  while (true) {
    auto next = stmt->step();
    if (!next) return next.error();
    if (!*next) break;
    const int gpu = static_cast<int>(stmt->column_int(0));
    all.insert(gpu);
    if (!gpus.empty() && std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) continue;
    auto info = nlohmann::json::parse(stmt->column_text(3), nullptr, false);
    if (!info.is_object()) info = nlohmann::json::object();
    info["index"] = gpu;
    if (!info.contains("uuid")) info["uuid"] = stmt->column_text(1);
    if (!info.contains("name")) info["name"] = stmt->column_text(2);
    j["devices"].push_back(std::move(info));
  }
  auto parsed = header_from_json(j);
  if (!parsed) return parsed.error();
  header.devices = std::move(parsed->devices);
  return ok_status();
}

Status read_raw(Database& db, const ColumnMap& columns, double from, double to,
                const std::vector<int>& gpus, std::vector<Sample>& out) {
  std::string cols;
  std::vector<Metric> metrics;
  for (const auto& info : all_metrics()) {
    if (!columns.scale[index_of(info.id)]) continue;
    cols += ", " + quote_identifier(info.key);
    metrics.push_back(info.id);
  }
  auto stmt = db.prepare(
      fmt::format("SELECT gpu, t_ms{} FROM samples WHERE t_ms >= ? AND t_ms < ?{} ORDER BY t_ms, "
                  "gpu",
                  cols, gpu_filter_clause(gpus)));
  if (!stmt) return stmt.error();
  stmt->bind(1, ms(from));
  stmt->bind(2, ms(to));
  return stmt->for_each_row([&] {
    Sample s;
    s.gpu = static_cast<int>(stmt->column_int(0));
    s.t = static_cast<double>(stmt->column_int(1)) / 1000.0;
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      if (const auto v = stmt->column_opt_int(2 + static_cast<int>(i)))
        s.values.set(metrics[i], from_stored(*v, *columns.scale[index_of(metrics[i])]));
    }
    out.push_back(std::move(s));
  });
}

// One sample per rolled-up minute, at the minute's end: the means, the counters'
// readings at the end, and the clock reasons OR-ed over the minute, whose
// throttling bits count only when most of its samples were throttled (a window
// of one sample is throttled or not as a whole).
Status read_rollups(Database& db, const ColumnMap& columns, std::int64_t from_minute,
                    std::int64_t to_minute, const std::vector<int>& gpus,
                    std::vector<Sample>& out) {
  std::string cols;
  std::vector<Metric> metrics;
  for (const auto& info : all_metrics()) {
    if (!columns.scale[index_of(info.id)]) continue;
    const bool at_end = is_counter(info.id) || info.id == Metric::ClockEventReasons;
    cols += ", " + quote_identifier(rollup_column(info.id, at_end ? "max" : "mean"));
    metrics.push_back(info.id);
  }
  auto stmt = db.prepare(fmt::format(
      "SELECT gpu, minute, n, throttled{} FROM rollup_1m WHERE minute >= ? AND minute < ?{} "
      "ORDER BY minute, gpu",
      cols, gpu_filter_clause(gpus)));
  if (!stmt) return stmt.error();
  stmt->bind(1, from_minute);
  stmt->bind(2, to_minute);
  return stmt->for_each_row([&] {
    Sample s;
    s.gpu = static_cast<int>(stmt->column_int(0));
    s.t = static_cast<double>(stmt->column_int(1) + 60);
    const auto n = stmt->column_int(2);
    const bool throttled = 2 * stmt->column_int(3) >= n && n > 0;
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      const auto v = stmt->column_opt_int(4 + static_cast<int>(i));
      if (!v) continue;
      double value = from_stored(*v, *columns.scale[index_of(metrics[i])]);
      if (metrics[i] == Metric::ClockEventReasons && !throttled) {
        value = static_cast<double>(static_cast<std::uint64_t>(*v) & ~clock_reason::kThrottling);
      }
      s.values.set(metrics[i], value);
    }
    out.push_back(std::move(s));
  });
}

// The sampling interval, which the store does not keep: the median spacing of
// each GPU's consecutive samples, to the millisecond.
std::optional<double> typical_interval(const std::vector<Sample>& samples) {
  std::map<int, double> last;
  std::vector<double> gaps;
  for (const auto& s : samples) {
    if (const auto it = last.find(s.gpu); it != last.end() && s.t > it->second)
      gaps.push_back(s.t - it->second);
    last[s.gpu] = s.t;
  }
  if (gaps.empty()) return std::nullopt;
  const auto mid = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
  std::nth_element(gaps.begin(), mid, gaps.end());
  return std::max(0.001, std::round(*mid * 1000) / 1000);
}

std::string describe_held(const DataRange& r) {
  std::string out;
  if (r.raw_oldest && r.raw_newest) {
    out = fmt::format("raw samples from {} to {}", format_utc_time(*r.raw_oldest),
                      format_utc_time(*r.raw_newest));
  }
  if (r.rollup_oldest && r.rollup_newest) {
    out += fmt::format("{}1-minute rollups from {} to {}", out.empty() ? "" : " and ",
                       format_utc_time(*r.rollup_oldest), format_utc_time(*r.rollup_newest + 60));
  }
  return out;
}

std::string gpu_list(const std::set<int>& gpus) {
  std::string out;
  for (int g : gpus) out += fmt::format("{}{}", out.empty() ? "" : ", ", g);
  return out;
}

// Rows of `table` with `column` in [from, to), of the wanted GPUs.
Result<std::int64_t> count_rows(Database& db, const char* table, const char* column,
                                std::int64_t from, std::int64_t to, const std::vector<int>& gpus) {
  auto stmt = db.prepare(fmt::format("SELECT COUNT(*) FROM {} WHERE {} >= ? AND {} < ?{}", table,
                                     column, column, gpu_filter_clause(gpus)));
  if (!stmt) return stmt.error();
  stmt->bind(1, from);
  stmt->bind(2, to);
  auto row = stmt->step();
  if (!row) return row.error();
  return stmt->column_int(0);
}

// The time (s) of the raw sample `keep` rows back from `to`: the newest `keep`
// samples come after it.
Result<double> newest_raw_cut(Database& db, double from, double to, const std::vector<int>& gpus,
                              std::size_t keep) {
  auto stmt = db.prepare(
      fmt::format("SELECT t_ms FROM samples WHERE t_ms >= ? AND t_ms < ?{} ORDER BY t_ms DESC "
                  "LIMIT 1 OFFSET ?",
                  gpu_filter_clause(gpus)));
  if (!stmt) return stmt.error();
  stmt->bind(1, ms(from));
  stmt->bind(2, ms(to));
  stmt->bind(3, static_cast<std::int64_t>(keep));
  auto row = stmt->step();
  if (!row) return row.error();
  if (!*row) return from;
  return static_cast<double>(stmt->column_int(0)) / 1000.0;
}

Result<HistoryTrace> read_history(Database& db, const ColumnMap& columns,
                                  const HistoryTraceRequest& rq) {
  HistoryTrace out;
  auto held = read_data_range(db);
  if (!held) return held.error();
  out.held = *held;
  std::set<int> known;
  if (auto s = read_devices(db, rq.gpus, out.trace.header, known); !s) return s.error();

  // Raw samples wherever they still exist, the minutes before them: the same
  // choice as the history API at a step under a minute.
  double split = raw_split(out.held, rq.from, rq.to, 0);
  std::int64_t raw_rows = 0;
  if (split < rq.to) {
    auto n = count_rows(db, "samples", "t_ms", ms(split), ms(rq.to), rq.gpus);
    if (!n) return n.error();
    raw_rows = *n;
    if (raw_rows > static_cast<std::int64_t>(rq.max_raw_samples)) {
      auto cut = newest_raw_cut(db, split, rq.to, rq.gpus, rq.max_raw_samples);
      if (!cut) return cut.error();
      split = std::min(rq.to, std::ceil(*cut / 60.0) * 60);
      out.raw_capped_at = raw_rows;
    }
  }
  const auto from_minute = static_cast<std::int64_t>(std::floor(rq.from / 60.0)) * 60;
  // With no raw sample left at the end, the minute holding `to` counts whole
  // where the request asks (a job's last minute is the job's).
  const bool whole_last = rq.whole_last_minute && split >= rq.to;
  const auto to_minute =
      static_cast<std::int64_t>(whole_last ? std::ceil(split / 60.0) : std::floor(split / 60.0)) *
      60;
  auto& samples = out.trace.samples;
  std::int64_t minutes = 0;
  if (to_minute > from_minute) {
    auto n = count_rows(db, "rollup_1m", "minute", from_minute, to_minute, rq.gpus);
    if (!n) return n.error();
    minutes = *n;
  }
  // Reserved whole: a day of 8 GPUs is hundreds of MB, and regrowth doubles it.
  const auto raw_wanted =
      out.raw_capped_at ? static_cast<std::int64_t>(rq.max_raw_samples) + 64 : raw_rows;
  samples.reserve(static_cast<std::size_t>(minutes + raw_wanted));
  if (minutes > 0) {
    if (auto s = read_rollups(db, columns, from_minute, to_minute, rq.gpus, samples); !s)
      return s.error();
  }
  out.rollup_samples = samples.size();
  if (split < rq.to) {
    if (auto s = read_raw(db, columns, split, rq.to, rq.gpus, samples); !s) return s.error();
  }
  out.raw_samples = samples.size() - out.rollup_samples;
  // A GPU is known by its device row, or failing that by samples in the range.
  for (const auto& sample : samples) known.insert(sample.gpu);
  for (int g : rq.gpus) {
    if (!known.contains(g)) {
      return Error{fmt::format("GPU {} is not in the history {} (it holds {})", g, rq.path,
                               known.empty() ? "no GPU" : "GPUs " + gpu_list(known))};
    }
  }
  if (out.rollup_samples > 0) {
    out.source = out.raw_samples > 0 ? "rollup_1m+raw" : "rollup_1m";
    if (out.raw_samples > 0) out.raw_from = samples[out.rollup_samples].t;
  } else {
    out.source = "raw";
  }
  return out;
}

}  // namespace

Result<OpenedHistory> open_history_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    return Error{
        fmt::format("no history database at {}: `gpulens serve` writes one while it runs (there by "
                    "default, or where its --history says); pass that file with --history",
                    path)};
  }
  if (std::filesystem::is_directory(status)) {
    return Error{
        fmt::format("{} is a directory: --history takes the history file (history.db)", path)};
  }
  if (access(path.c_str(), R_OK) != 0) {
    return Error{fmt::format(
        "cannot read {}: {} (the history belongs to the user the agent runs as: run the "
        "report as that user, or with sudo)",
        path, std::strerror(errno))};
  }
  return open_history(path);
}

Result<HistoryTrace> read_history_samples(OpenedHistory& history, const HistoryTraceRequest& rq) {
  if (!(rq.from < rq.to)) {
    return Error{fmt::format("the range is empty: from ({}) must be before to ({})",
                             format_utc_time(rq.from), format_utc_time(rq.to))};
  }
  return read_history(history.db, history.columns, rq);
}

std::string describe_history_held(const DataRange& held) {
  return describe_held(held);
}

Status finish_history_trace(HistoryTrace& out, const HistoryTraceRequest& rq) {
  Trace& trace = out.trace;
  if (trace.samples.empty()) {
    const std::string held = describe_held(out.held);
    if (held.empty()) {
      return Error{fmt::format(
          "{} holds no samples yet: the agent commits them about once a second while it runs",
          rq.path)};
    }
    std::string gpus;
    for (int g : rq.gpus) gpus += fmt::format("{}{}", gpus.empty() ? " of GPU " : ", ", g);
    return Error{fmt::format("no samples{} in {} from {} to {}; it holds {}", gpus, rq.path,
                             format_utc_time(rq.from), format_utc_time(rq.to), held)};
  }
  // A rolled-up minute covers 60 s: with one in the trace, the interval is a
  // minute, which still lets each raw sample cover the time since the one before.
  trace.header.interval_s =
      out.rollup_samples > 0 ? std::optional<double>(60.0) : typical_interval(trace.samples);
  trace.warnings.push_back(fmt::format("from the agent's history {}, {} to {}", rq.path,
                                       format_utc_time(rq.from), format_utc_time(rq.to)));
  if (out.rollup_samples > 0) {
    const std::string why =
        out.raw_capped_at
            ? fmt::format("the range holds {} raw samples; a report reads the newest {}",
                          *out.raw_capped_at, rq.max_raw_samples)
            : std::string("raw samples were no longer kept");
    trace.warnings.push_back(fmt::format(
        "{} from 1-minute rollups ({}): each minute's means count as one 60 s sample, so states "
        "there are judged minute by minute",
        out.raw_from ? "before " + format_utc_time(*out.raw_from) : std::string("all"), why));
  }
  trace.warnings.push_back(
      "history keeps no process lists or marks: allocated counts device memory in use, and "
      "there are no phases or step MFU");
  return ok_status();
}

Result<HistoryTrace> load_history_trace(const HistoryTraceRequest& rq) {
  if (!(rq.from < rq.to)) {
    return Error{fmt::format("the range is empty: from ({}) must be before to ({})",
                             format_utc_time(rq.from), format_utc_time(rq.to))};
  }
  auto opened = open_history_file(rq.path);
  if (!opened) return opened.error();
  // One read transaction: the agent's commits and retention while we read do
  // not show, so rollups and raw samples meet where the range said they would.
  if (auto s = opened->db.exec("BEGIN"); !s) return s.error();
  auto out = read_history_samples(*opened, rq);
  (void)opened->db.exec("COMMIT");
  if (!out) return out.error();
  if (auto s = finish_history_trace(*out, rq); !s) return s.error();
  return out;
}

}  // namespace gpulens::store

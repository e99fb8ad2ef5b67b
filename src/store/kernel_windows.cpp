// SPDX-License-Identifier: Apache-2.0
#include "store/kernel_windows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/value_ranges.hpp"

namespace gpulens::store {
namespace {

constexpr char kTopVersion = 1;
// A stored top list: a version byte, a count and three varints of at most 10
// bytes per kernel.
constexpr std::size_t kMaxTopBytes = 2 + kMaxStoredKernels * 30;

constexpr const char* kWindowColumns =
    "end_ns, gpu, pid, start_ns, device, uid, process, kube_namespace, kube_pod, "
    "kube_container, is_window, busy_ns, idle_ns, top, other_kernels, other_launches, "
    "other_ns, coll_count, coll_bytes, coll_ns, copy_count, copy_bytes, copy_ns, "
    "memset_count, memset_bytes, memset_ns, cupti_dropped, summaries_dropped";
constexpr int kColumnCount = 28;

// Counters are unsigned 64-bit; SQLite integers are signed. The bits are kept
// (a value past 2^63 reads as negative in the sqlite3 shell, and back exactly).
std::int64_t as_int(std::uint64_t v) {
  return static_cast<std::int64_t>(v);
}
std::uint64_t as_uint(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

std::optional<std::uint64_t> get_varint(std::string_view& in) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return v;
  }
  return std::nullopt;  // cut short, or longer than 10 bytes
}

struct TopEntry {
  std::int64_t name_id = 0;
  std::uint64_t launches = 0, ns = 0;
};

std::string encode_top(const std::vector<TopEntry>& top) {
  std::string out(1, kTopVersion);
  put_varint(out, top.size());
  for (const auto& e : top) {
    put_varint(out, as_uint(e.name_id));
    put_varint(out, e.launches);
    put_varint(out, e.ns);
  }
  return out;
}

std::optional<std::vector<TopEntry>> decode_top(std::string_view in, std::string& why) {
  if (in.size() > kMaxTopBytes) {
    why = fmt::format("its top list is {} bytes (at most {})", in.size(), kMaxTopBytes);
    return std::nullopt;
  }
  if (in.empty() || in.front() != kTopVersion) {
    why = "its top list is not of a known version";
    return std::nullopt;
  }
  in.remove_prefix(1);
  const auto n = get_varint(in);
  if (!n || *n > kMaxStoredKernels) {
    why = "its top list's count is unreadable or too large";
    return std::nullopt;
  }
  std::vector<TopEntry> out(static_cast<std::size_t>(*n));
  for (auto& e : out) {
    const auto id = get_varint(in);
    const auto launches = id ? get_varint(in) : std::nullopt;
    const auto ns = launches ? get_varint(in) : std::nullopt;
    if (!ns) {
      why = "its top list is cut short";
      return std::nullopt;
    }
    e = {as_int(*id), *launches, *ns};
  }
  if (!in.empty()) {
    why = "its top list has trailing bytes";
    return std::nullopt;
  }
  return out;
}

bool within_bounds(const kernels::KernelWindow& w) {
  if (w.gpu < 0 || w.top.size() > kMaxStoredKernels) return false;
  for (const std::string* s :
       {&w.process, &w.kube.namespace_name, &w.kube.pod, &w.kube.container}) {
    if (s->size() > kMaxStoredText) return false;
  }
  return std::all_of(w.top.begin(), w.top.end(),
                     [](const auto& k) { return k.name.size() <= kMaxStoredKernelName; });
}

bool plausible_ns(std::int64_t ns) {
  return plausible_time(static_cast<double>(ns) / 1e9);
}

// The name's id, its last use moved to `end_ms` if later.
Result<std::int64_t> name_id(Statement& upsert, const std::string& name, std::int64_t end_ms) {
  upsert.bind(1, std::string_view(name));
  upsert.bind(2, end_ms);
  auto row = upsert.step();
  if (!row) return row.error();
  if (!*row) return Error{"kernel name upsert returned no id"};
  const std::int64_t id = upsert.column_int(0);
  upsert.reset();
  return id;
}

}  // namespace

Status write_kernel_windows(Database& db, const std::vector<kernels::KernelWindow>& windows,
                            std::size_t* kept) {
  if (kept != nullptr) *kept = 0;
  if (windows.empty()) return ok_status();
  auto exists = db.prepare("SELECT 1 FROM kernel_windows WHERE end_ns = ? AND gpu = ? AND pid = ?");
  if (!exists) return exists.error();
  auto upsert = db.prepare(
      "INSERT INTO kernel_names (name, last_ms) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET "
      "last_ms = MAX(last_ms, excluded.last_ms) RETURNING id");
  if (!upsert) return upsert.error();
  std::string params = "?";
  for (int i = 1; i < kColumnCount; ++i) params += ", ?";
  auto insert = db.prepare(fmt::format("INSERT OR REPLACE INTO kernel_windows ({}) VALUES ({})",
                                       kWindowColumns, params));
  if (!insert) return insert.error();
  for (const auto& w : windows) {
    if (!plausible_ns(w.start_unix_ns) || !plausible_ns(w.end_unix_ns) || !within_bounds(w))
      continue;
    exists->bind(1, w.end_unix_ns);
    exists->bind(2, std::int64_t{w.gpu});
    exists->bind(3, std::int64_t{w.pid});
    auto replacing = exists->step();
    if (!replacing) return replacing.error();
    exists->reset();
    const std::int64_t end_ms = w.end_unix_ns / 1'000'000;
    std::vector<TopEntry> top;
    for (const auto& k : w.top) {
      auto id = name_id(*upsert, k.name, end_ms);
      if (!id) return id.error();
      top.push_back({*id, k.launches, k.ns});
    }
    int p = 1;
    Statement& s = *insert;
    s.bind(p++, w.end_unix_ns);
    s.bind(p++, std::int64_t{w.gpu});
    s.bind(p++, std::int64_t{w.pid});
    s.bind(p++, w.start_unix_ns);
    s.bind(p++, std::int64_t{w.device});
    s.bind(p++, std::int64_t{w.uid});
    for (const std::string* text :
         {&w.process, &w.kube.namespace_name, &w.kube.pod, &w.kube.container})
      s.bind(p++, std::string_view(*text));
    s.bind(p++, std::int64_t{w.window ? 1 : 0});
    s.bind(p++, as_int(w.busy_ns));
    s.bind(p++, as_int(w.idle_ns));
    s.bind_blob(p++, encode_top(top));
    for (std::uint64_t v : {w.other_kernels, w.other_launches, w.other_ns}) s.bind(p++, as_int(v));
    for (const kernels::WorkTotal* t : {&w.collectives, &w.copies, &w.memsets}) {
      for (std::uint64_t v : {t->count, t->bytes, t->ns}) s.bind(p++, as_int(v));
    }
    s.bind(p++, as_int(w.cupti_dropped));
    s.bind(p++, as_int(w.summaries_dropped));
    if (auto st = s.run(); !st) return st;
    if (kept != nullptr && !*replacing) ++*kept;
  }
  return ok_status();
}

Status expire_kernel_windows(Database& db, std::int64_t limit_ms) {
  auto windows = db.prepare("DELETE FROM kernel_windows WHERE end_ns < ?");
  if (!windows) return windows.error();
  // Saturates: a limit past 2262 in ns would not fit, and nothing ends that late.
  constexpr std::int64_t kMaxMs = INT64_MAX / 1'000'000;
  windows->bind(1, std::clamp(limit_ms, -kMaxMs, kMaxMs) * 1'000'000);
  if (auto s = windows->run(); !s) return s;
  // A name's last_ms is the end of the newest window that used it: below the
  // limit, every window that names it has just gone.
  auto names = db.prepare("DELETE FROM kernel_names WHERE last_ms < ?");
  if (!names) return names.error();
  names->bind(1, limit_ms);
  return names->run();
}

namespace {
Result<std::optional<std::int64_t>> end_ms(Database& db, const char* aggregate) {
  auto stmt = db.prepare(fmt::format("SELECT {}(end_ns) FROM kernel_windows", aggregate));
  if (!stmt) return stmt.error();
  if (auto row = stmt->step(); !row) return row.error();
  const auto ns = stmt->column_opt_int(0);
  if (!ns) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(*ns / 1'000'000);
}
}  // namespace

Result<std::optional<std::int64_t>> newest_kernel_window_ms(Database& db) {
  return end_ms(db, "MAX");
}
Result<std::optional<std::int64_t>> oldest_kernel_window_ms(Database& db) {
  return end_ms(db, "MIN");
}

namespace {

// Reads names by id, each once per load.
class NameCache {
 public:
  explicit NameCache(Statement lookup) : lookup_(std::move(lookup)) {}
  Result<std::optional<std::string>> get(std::int64_t id) {
    if (auto it = names_.find(id); it != names_.end()) return it->second;
    lookup_.bind(1, id);
    auto row = lookup_.step();
    if (!row) return row.error();
    std::optional<std::string> name;
    if (*row) name = lookup_.column_text(0);
    lookup_.reset();
    names_[id] = name;
    return name;
  }

 private:
  Statement lookup_;
  std::map<std::int64_t, std::optional<std::string>> names_;
};

bool fits_u32(std::int64_t v) {
  return v >= 0 && v <= std::int64_t{UINT32_MAX};
}

// One row back, or nullopt with `why` when it is not a window gpulens wrote.
Result<std::optional<kernels::KernelWindow>> window_of(const Statement& s, NameCache& names,
                                                       std::string& why) {
  kernels::KernelWindow w;
  int c = 0;
  w.end_unix_ns = s.column_int(c++);
  const std::int64_t gpu = s.column_int(c++), pid = s.column_int(c++);
  w.start_unix_ns = s.column_int(c++);
  const std::int64_t device = s.column_int(c++), uid = s.column_int(c++);
  if (gpu < 0 || gpu > 65535 || !fits_u32(pid) || !fits_u32(device) || !fits_u32(uid) ||
      !plausible_ns(w.start_unix_ns) || !plausible_ns(w.end_unix_ns)) {
    why = "its GPU, pid, device, uid or times are out of range";
    return std::optional<kernels::KernelWindow>();
  }
  w.gpu = static_cast<int>(gpu);
  w.pid = static_cast<std::uint32_t>(pid);
  w.device = static_cast<std::uint32_t>(device);
  w.uid = static_cast<std::uint32_t>(uid);
  for (std::string* text : {&w.process, &w.kube.namespace_name, &w.kube.pod, &w.kube.container}) {
    *text = s.column_text(c++);
    if (text->size() > kMaxStoredText) {
      why = fmt::format("a text column is {} bytes (at most {})", text->size(), kMaxStoredText);
      return std::optional<kernels::KernelWindow>();
    }
  }
  w.window = s.column_int(c++) != 0;
  w.busy_ns = as_uint(s.column_int(c++));
  w.idle_ns = as_uint(s.column_int(c++));
  const auto top = decode_top(s.column_blob(c++), why);
  if (!top) return std::optional<kernels::KernelWindow>();
  for (const auto& e : *top) {
    auto name = names.get(e.name_id);
    if (!name) return name.error();
    if (!*name || (*name)->size() > kMaxStoredKernelName) {
      why = fmt::format("its kernel name {} is missing or too long", e.name_id);
      return std::optional<kernels::KernelWindow>();
    }
    w.top.push_back({std::move(**name), e.launches, e.ns});
  }
  for (std::uint64_t* v : {&w.other_kernels, &w.other_launches, &w.other_ns})
    *v = as_uint(s.column_int(c++));
  for (kernels::WorkTotal* t : {&w.collectives, &w.copies, &w.memsets}) {
    for (std::uint64_t* v : {&t->count, &t->bytes, &t->ns}) *v = as_uint(s.column_int(c++));
  }
  w.cupti_dropped = as_uint(s.column_int(c++));
  w.summaries_dropped = as_uint(s.column_int(c++));
  return std::optional<kernels::KernelWindow>(std::move(w));
}

}  // namespace

Result<LoadedKernelWindows> read_newest_kernel_windows(Database& db, std::size_t per_gpu,
                                                       const std::vector<int>& gpus) {
  LoadedKernelWindows out;
  auto odd = db.query_int(
      "SELECT COUNT(*) FROM kernel_windows WHERE typeof(gpu) <> 'integer' OR gpu < 0 OR "
      "gpu > 65535");
  if (!odd) return odd.error();
  if (*odd > 0) {
    out.skipped = static_cast<std::size_t>(*odd);
    out.first_problem = "its GPU is not an index from 0 to 65535";
  }
  auto lookup = db.prepare("SELECT name FROM kernel_names WHERE id = ?");
  if (!lookup) return lookup.error();
  NameCache names(std::move(*lookup));
  auto rows = db.prepare(fmt::format(
      "SELECT {} FROM kernel_windows WHERE gpu = ? ORDER BY end_ns DESC, pid DESC LIMIT ?",
      kWindowColumns));
  if (!rows) return rows.error();
  for (const int gpu : std::set<int>(gpus.begin(), gpus.end())) {
    rows->bind(1, std::int64_t{gpu});
    rows->bind(2, static_cast<std::int64_t>(std::min<std::size_t>(per_gpu, INT64_MAX)));
    std::optional<Error> failed;
    const Status walked = rows->for_each_row([&] {
      std::string why;
      auto w = window_of(*rows, names, why);
      if (!w) {
        failed = w.error();
        return false;
      }
      if (*w) {
        out.windows.push_back(std::move(**w));
      } else {
        if (out.skipped++ == 0) out.first_problem = why;
      }
      return true;
    });
    if (!walked) return walked.error();
    if (failed) return *failed;
    rows->reset();
  }
  std::sort(out.windows.begin(), out.windows.end(), [](const auto& a, const auto& b) {
    if (a.end_unix_ns != b.end_unix_ns) return a.end_unix_ns < b.end_unix_ns;
    return a.gpu != b.gpu ? a.gpu < b.gpu : a.pid < b.pid;
  });
  return out;
}

}  // namespace gpulens::store

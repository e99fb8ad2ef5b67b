// SPDX-License-Identifier: Apache-2.0
#include "store/slurm_jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/value_ranges.hpp"
#include "store/history_time.hpp"

namespace gpulens::store {
namespace {

// Job ids are stored as integers (compact, and they sort as Slurm counts them):
// 1 to 2^32-3, as the sources accept them.
std::optional<std::int64_t> job_number(std::string_view job) {
  if (job.empty() || job.size() > 10) return std::nullopt;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(job.data(), job.data() + job.size(), n);
  if (ec != std::errc() || end != job.data() + job.size()) return std::nullopt;
  if (n < 1 || n > 4294967293LL) return std::nullopt;
  return n;
}

SlurmJobUse row_of(const Statement& s) {
  SlurmJobUse u;
  u.job = std::to_string(s.column_int(0));
  u.step = s.column_text(1);
  u.gpu = static_cast<int>(s.column_int(2));
  u.user = s.column_text(3);
  u.account = s.column_text(4);
  u.first_t = static_cast<double>(s.column_int(5)) / 1000.0;
  u.last_t = static_cast<double>(s.column_int(6)) / 1000.0;
  return u;
}

// Names as the Slurm attribution accepts them (sources/host/slurm_ids.hpp); a
// replayed recording is trusted no further: a longer name is cut, an odd step
// skipped, so a row stays small whatever the input.
constexpr std::size_t kMaxNameBytes = 128;
constexpr std::size_t kMaxStepBytes = 16;  // "interactive", or up to 10 digits

std::string_view bounded(const std::string& name) {
  return std::string_view(name).substr(0, kMaxNameBytes);
}

constexpr const char* kSlurmJobColumns = "job, step, gpu, user, account, first_ms, last_ms";

}  // namespace

void SlurmJobUses::add_samples(const std::vector<Sample>& samples) {
  for (const auto& s : samples) {
    if (s.allocations) {
      for (const auto& a : *s.allocations) {
        if (a.scheduler != "slurm" || a.job.empty()) continue;
        add({a.job, std::string(kAllocationStep), s.gpu, a.user, a.account, s.t, s.t});
      }
    }
    if (!s.procs) continue;
    for (const auto& p : *s.procs) {
      if (!p.slurm || p.slurm->job.empty()) continue;
      add({p.slurm->job, p.slurm->step, s.gpu, p.slurm->user, p.slurm->account, s.t, s.t});
    }
  }
}

void SlurmJobUses::add(const SlurmJobUse& use) {
  auto [it, inserted] = uses_.try_emplace(std::make_tuple(use.job, use.step, use.gpu), use);
  if (inserted) return;
  SlurmJobUse& u = it->second;
  u.first_t = std::min(u.first_t, use.first_t);
  // The later sighting's names win, as in the table.
  if (use.last_t >= u.last_t) {
    if (!use.user.empty()) u.user = use.user;
    if (!use.account.empty()) u.account = use.account;
  }
  u.last_t = std::max(u.last_t, use.last_t);
}

void SlurmJobUses::merge(const SlurmJobUses& other) {
  for (const auto& [key, use] : other.uses_) add(use);
}

std::vector<SlurmJobUse> SlurmJobUses::rows() const {
  std::vector<SlurmJobUse> out;
  out.reserve(uses_.size());
  for (const auto& [key, use] : uses_) out.push_back(use);
  return out;
}

void SlurmJobUses::trim(std::size_t max) {
  if (uses_.size() <= max) return;
  std::vector<double> last;
  last.reserve(uses_.size());
  for (const auto& [key, use] : uses_) last.push_back(use.last_t);
  const auto cut = last.begin() + static_cast<std::ptrdiff_t>(uses_.size() - max);
  std::nth_element(last.begin(), cut, last.end());
  const double keep_from = *cut;
  for (auto it = uses_.begin(); it != uses_.end() && uses_.size() > max;) {
    it = it->second.last_t < keep_from ? uses_.erase(it) : std::next(it);
  }
  for (auto it = uses_.begin(); it != uses_.end() && uses_.size() > max;) {
    it = it->second.last_t <= keep_from ? uses_.erase(it) : std::next(it);
  }
}

Status write_slurm_uses(Database& db, const std::vector<SlurmJobUse>& uses) {
  if (uses.empty()) return ok_status();
  auto stmt = db.prepare(fmt::format(
      "INSERT INTO slurm_jobs ({}) VALUES (?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (job, step, gpu) DO UPDATE SET "
      "user = CASE WHEN excluded.user <> '' AND excluded.last_ms >= last_ms "
      "THEN excluded.user ELSE user END, "
      "account = CASE WHEN excluded.account <> '' AND excluded.last_ms >= last_ms "
      "THEN excluded.account ELSE account END, "
      "first_ms = MIN(first_ms, excluded.first_ms), last_ms = MAX(last_ms, excluded.last_ms)",
      kSlurmJobColumns));
  if (!stmt) return stmt.error();
  for (const auto& u : uses) {
    const auto job = job_number(u.job);
    // As for samples: a time that would wrap first_ms/last_ms is never stored.
    if (!job || u.step.size() > kMaxStepBytes || !plausible_time(u.first_t) ||
        !plausible_time(u.last_t))
      continue;
    stmt->bind(1, *job);
    stmt->bind(2, std::string_view(u.step));
    stmt->bind(3, std::int64_t{u.gpu});
    stmt->bind(4, bounded(u.user));
    stmt->bind(5, bounded(u.account));
    stmt->bind(6, to_ms(u.first_t));
    stmt->bind(7, to_ms(u.last_t));
    if (auto s = stmt->run(); !s) return s;
  }
  return ok_status();
}

Status expire_slurm_uses(Database& db, std::int64_t limit_ms) {
  auto stmt = db.prepare("DELETE FROM slurm_jobs WHERE last_ms < ?");
  if (!stmt) return stmt.error();
  stmt->bind(1, limit_ms);
  return stmt->run();
}

Result<std::vector<SlurmJobUse>> read_slurm_job(Database& db, std::string_view job) {
  std::vector<SlurmJobUse> out;
  const auto number = job_number(job);
  if (!number) return out;
  auto stmt = db.prepare(fmt::format(
      "SELECT {} FROM slurm_jobs WHERE job = ? ORDER BY gpu, first_ms, step", kSlurmJobColumns));
  if (!stmt) return stmt.error();
  stmt->bind(1, *number);
  const Status rows = stmt->for_each_row([&] { out.push_back(row_of(*stmt)); });
  if (!rows) return rows.error();
  return out;
}

Result<std::vector<std::string>> latest_slurm_jobs(Database& db, int n) {
  auto stmt = db.prepare(
      "SELECT job FROM slurm_jobs GROUP BY job ORDER BY MAX(last_ms) DESC, job DESC LIMIT ?");
  if (!stmt) return stmt.error();
  stmt->bind(1, std::int64_t{n});
  std::vector<std::string> out;
  const Status rows =
      stmt->for_each_row([&] { out.push_back(std::to_string(stmt->column_int(0))); });
  if (!rows) return rows.error();
  return out;
}

Result<std::vector<SlurmJobUse>> slurm_uses_overlapping(Database& db, std::string_view job,
                                                        const std::vector<int>& gpus, double from,
                                                        double to) {
  std::string list;
  for (int g : gpus) list += fmt::format("{}{}", list.empty() ? "" : ",", g);
  std::vector<SlurmJobUse> out;
  if (list.empty()) return out;
  auto stmt = db.prepare(fmt::format(
      "SELECT {} FROM slurm_jobs WHERE job <> ? AND gpu IN ({}) AND last_ms >= ? AND first_ms <= ? "
      "ORDER BY gpu, first_ms, job, step",
      kSlurmJobColumns, list));
  if (!stmt) return stmt.error();
  stmt->bind(1, job_number(job).value_or(0));
  stmt->bind(2, to_ms(from));
  stmt->bind(3, to_ms(to));
  const Status rows = stmt->for_each_row([&] { out.push_back(row_of(*stmt)); });
  if (!rows) return rows.error();
  return out;
}

}  // namespace gpulens::store

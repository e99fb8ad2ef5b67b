// SPDX-License-Identifier: Apache-2.0
#include "store/pod_uses.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/value_ranges.hpp"
#include "store/history_time.hpp"

namespace gpulens::store {
namespace {

constexpr std::size_t kMaxKubeNameBytes = 253;
constexpr const char* kPodColumns = "namespace, pod, gpu, first_ms, last_ms";

}  // namespace

void PodUses::add_samples(const std::vector<Sample>& samples) {
  for (const auto& s : samples) {
    if (!s.allocations) continue;
    for (const auto& a : *s.allocations) {
      if (a.scheduler != "kubernetes" || a.pod.empty()) continue;
      add({a.namespace_name, a.pod, s.gpu, s.t, s.t});
    }
  }
}

void PodUses::add(const PodUse& use) {
  auto [it, inserted] =
      uses_.try_emplace(std::make_tuple(use.namespace_name, use.pod, use.gpu), use);
  if (inserted) return;
  it->second.first_t = std::min(it->second.first_t, use.first_t);
  it->second.last_t = std::max(it->second.last_t, use.last_t);
}

void PodUses::merge(const PodUses& other) {
  for (const auto& [key, use] : other.uses_) add(use);
}

std::vector<PodUse> PodUses::rows() const {
  std::vector<PodUse> out;
  out.reserve(uses_.size());
  for (const auto& [key, use] : uses_) out.push_back(use);
  return out;
}

void PodUses::trim(std::size_t max) {
  while (uses_.size() > max) {
    const auto oldest = std::min_element(
        uses_.begin(), uses_.end(),
        [](const auto& a, const auto& b) { return a.second.last_t < b.second.last_t; });
    uses_.erase(oldest);
  }
}

Status write_pod_uses(Database& db, const std::vector<PodUse>& uses) {
  if (uses.empty()) return ok_status();
  auto stmt = db.prepare(fmt::format(
      "INSERT INTO kube_pods ({}) VALUES (?, ?, ?, ?, ?) "
      "ON CONFLICT (namespace, pod, gpu) DO UPDATE SET "
      "first_ms = MIN(first_ms, excluded.first_ms), last_ms = MAX(last_ms, excluded.last_ms)",
      kPodColumns));
  if (!stmt) return stmt.error();
  for (const auto& u : uses) {
    // As for samples: a time that would wrap first_ms/last_ms is never stored.
    if (u.namespace_name.size() > kMaxKubeNameBytes || u.pod.size() > kMaxKubeNameBytes ||
        !plausible_time(u.first_t) || !plausible_time(u.last_t)) {
      continue;
    }
    stmt->bind(1, std::string_view(u.namespace_name));
    stmt->bind(2, std::string_view(u.pod));
    stmt->bind(3, std::int64_t{u.gpu});
    stmt->bind(4, to_ms(u.first_t));
    stmt->bind(5, to_ms(u.last_t));
    if (auto s = stmt->run(); !s) return s;
  }
  return ok_status();
}

Status expire_pod_uses(Database& db, std::int64_t limit_ms) {
  auto stmt = db.prepare("DELETE FROM kube_pods WHERE last_ms < ?");
  if (!stmt) return stmt.error();
  stmt->bind(1, limit_ms);
  return stmt->run();
}

Result<std::vector<PodUse>> pod_uses_between(Database& db, double from, double to,
                                             const std::vector<int>& gpus, std::size_t limit) {
  // GPU indices are ints: written into the statement, not bound one by one.
  std::string only;
  for (int g : gpus) only += fmt::format("{}{}", only.empty() ? " AND gpu IN (" : ",", g);
  if (!only.empty()) only += ')';
  auto stmt =
      db.prepare(fmt::format("SELECT {} FROM kube_pods WHERE last_ms >= ? AND first_ms <= ?{} "
                             "ORDER BY last_ms DESC, namespace, pod, gpu LIMIT ?",
                             kPodColumns, only));
  if (!stmt) return stmt.error();
  stmt->bind(1, to_ms(from));
  stmt->bind(2, to_ms(to));
  stmt->bind(3, static_cast<std::int64_t>(limit));
  std::vector<PodUse> out;
  const Status rows = stmt->for_each_row([&] {
    PodUse u;
    u.namespace_name = stmt->column_text(0);
    u.pod = stmt->column_text(1);
    u.gpu = static_cast<int>(stmt->column_int(2));
    u.first_t = static_cast<double>(stmt->column_int(3)) / 1000.0;
    u.last_t = static_cast<double>(stmt->column_int(4)) / 1000.0;
    out.push_back(std::move(u));
  });
  if (!rows) return rows.error();
  return out;
}

}  // namespace gpulens::store

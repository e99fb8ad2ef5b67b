// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/alert_tracker.hpp"

namespace gpulens::diagnosis {

std::string_view alert_kind_id(AlertEvent::Kind kind) {
  return kind == AlertEvent::Kind::Firing ? "firing" : "resolved";
}

AlertTracker::Track& AlertTracker::track(std::string_view rule, int gpu, long code) {
  auto it = tracks_.find(KeyView{rule, gpu, code});
  if (it == tracks_.end()) it = tracks_.emplace(Key{std::string(rule), gpu, code}, Track{}).first;
  return it->second;
}

bool AlertTracker::step(Track& tr, const RuleSettings& rule, double t, RuleVerdict verdict) {
  tr.resolve_now = false;
  switch (tr.phase) {
    case Phase::Inactive:
      if (verdict != RuleVerdict::Fire) return false;
      tr.phase = Phase::Pending;
      tr.since = t;
      [[fallthrough]];
    case Phase::Pending:
      // A pending alert needs the firing condition without a break.
      if (verdict != RuleVerdict::Fire) {
        tr.phase = Phase::Inactive;
        return false;
      }
      if (t - tr.since < rule.for_s) return false;
      tr.phase = Phase::Firing;
      return true;
    case Phase::Firing:
      if (verdict != RuleVerdict::Clear) return false;
      tr.phase = Phase::Clearing;
      tr.clear_since = t;
      [[fallthrough]];
    case Phase::Clearing:
      if (verdict != RuleVerdict::Clear) {
        tr.phase = Phase::Firing;
        return false;
      }
      if (t - tr.clear_since >= rule.clear_for_s) tr.resolve_now = true;
      return false;
  }
  return false;
}

void AlertTracker::emit_firing(Track& tr, const RuleSettings& rule, int gpu, double t,
                               AlertText text) {
  tr.fired_at = t;
  tr.severity = rule.severity;
  tr.message = text.message;
  tr.fixes = text.fixes;
  tr.count = 1;
  AlertEvent e;
  e.kind = AlertEvent::Kind::Firing;
  e.rule = rule.id;
  e.gpu = gpu;
  e.t = t;
  e.since = tr.since;
  e.severity = rule.severity;
  e.message = std::move(text.message);
  e.evidence = std::move(text.evidence);
  e.fixes = std::move(text.fixes);
  events_.push_back(std::move(e));
}

void AlertTracker::emit_resolved(Track& tr, const std::string& rule, int gpu, double t) {
  AlertEvent e;
  e.kind = AlertEvent::Kind::Resolved;
  e.rule = rule;
  e.gpu = gpu;
  e.t = t;
  e.since = tr.fired_at;
  e.severity = tr.severity;
  e.message = tr.message;
  e.count = tr.count;
  events_.push_back(std::move(e));
  tr = Track{};
}

void AlertTracker::point(const RuleSettings& rule, int gpu, long code, double t, AlertText text,
                         std::optional<double> quiet_s) {
  Track& tr = track(rule.id, gpu, code);
  tr.last_seen = t;
  tr.quiet_s = quiet_s;
  if (tr.phase == Phase::Firing) {
    ++tr.count;
    return;
  }
  tr.phase = Phase::Firing;
  tr.since = t;
  emit_firing(tr, rule, gpu, t, std::move(text));
}

void AlertTracker::resolve(const std::string& rule, int gpu, long code, double t) {
  auto it = tracks_.find(KeyView{rule, gpu, code});
  if (it == tracks_.end() || it->second.phase != Phase::Firing) return;
  emit_resolved(it->second, rule, gpu, t);
}

void AlertTracker::expire(double t) {
  for (auto& [key, tr] : tracks_) {
    if (tr.phase == Phase::Firing && tr.quiet_s && t - tr.last_seen >= *tr.quiet_s) {
      emit_resolved(tr, key.rule, key.gpu, t);
    }
  }
}

std::vector<AlertEvent> AlertTracker::take_events() {
  std::vector<AlertEvent> out;
  out.swap(events_);
  return out;
}

std::vector<ActiveAlert> AlertTracker::firing() const {
  return firing(-1);
}

std::vector<ActiveAlert> AlertTracker::firing(int gpu) const {
  std::vector<ActiveAlert> out;
  for (const auto& [key, tr] : tracks_) {
    if (gpu >= 0 && key.gpu != gpu) continue;
    if (tr.phase != Phase::Firing && tr.phase != Phase::Clearing) continue;
    out.push_back(
        {key.rule, key.gpu, tr.severity, tr.since, tr.fired_at, tr.message, tr.count, tr.fixes});
  }
  return out;
}

bool AlertTracker::is_firing(const std::string& rule, int gpu) const {
  for (const auto& [key, tr] : tracks_) {
    if (key.rule == rule && key.gpu == gpu &&
        (tr.phase == Phase::Firing || tr.phase == Phase::Clearing))
      return true;
  }
  return false;
}

}  // namespace gpulens::diagnosis

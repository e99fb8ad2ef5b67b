// SPDX-License-Identifier: Apache-2.0
#pragma once
// The alert state machine, the same for every rule: pending while the firing
// condition holds for less than `for`, firing after, resolving once the clear
// condition has held for `clear_for`. One episode gives exactly one firing and
// one resolved event (de-duplication); repeats of a point event while it fires
// only raise its count.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "diagnosis/alert_config.hpp"
#include "diagnosis/alert_rules.hpp"

namespace gpulens::diagnosis {

struct AlertEvent {
  enum class Kind : std::uint8_t { Firing, Resolved };
  Kind kind = Kind::Firing;
  std::string rule;
  int gpu = 0;
  double t = 0;      // when this event happened
  double since = 0;  // when the condition began (firing) / the alert fired (resolved)
  Severity severity = Severity::Warning;
  std::string message;
  std::vector<Evidence> evidence;
  std::vector<std::string> fixes;
  int count = 1;  // point events coalesced into this episode
};

std::string_view alert_kind_id(AlertEvent::Kind kind);  // "firing" / "resolved"

struct ActiveAlert {
  std::string rule;
  int gpu = 0;
  Severity severity = Severity::Warning;
  double since = 0;  // condition start
  double fired_at = 0;
  std::string message;
  int count = 1;
  std::vector<std::string> fixes;  // the fixes of its firing event
};

class AlertTracker {
 public:
  // One verdict of a window rule for one GPU. `text` is called only on a
  // transition, so messages are built once per episode.
  template <typename TextFn>
  void update(const RuleSettings& rule, int gpu, double t, RuleVerdict verdict, TextFn&& text) {
    Track& tr = track(rule.id, gpu, 0);
    if (step(tr, rule, t, verdict)) emit_firing(tr, rule, gpu, t, text());
    if (tr.resolve_now) emit_resolved(tr, rule.id, gpu, t);
  }

  // A point event (an XID, a lost GPU) fires at once; `code` separates kinds of
  // the same rule (the XID number). A repeat while firing raises the count only.
  void point(const RuleSettings& rule, int gpu, long code, double t, AlertText text,
             std::optional<double> quiet_s);
  // Resolves a point alert now (a lost GPU answers again).
  void resolve(const std::string& rule, int gpu, long code, double t);
  // Resolves point alerts whose quiet period has passed by `t`.
  void expire(double t);

  std::vector<AlertEvent> take_events();
  std::vector<ActiveAlert> firing() const;
  std::vector<ActiveAlert> firing(int gpu) const;
  bool is_firing(const std::string& rule, int gpu) const;

 private:
  enum class Phase : std::uint8_t { Inactive, Pending, Firing, Clearing };
  struct Key {
    std::string rule;
    int gpu;
    long code;
  };
  struct KeyView {
    std::string_view rule;
    int gpu;
    long code;
  };
  // Transparent, so that a lookup per tick needs no string copy.
  struct KeyLess {
    using is_transparent = void;
    static KeyView view(const Key& k) { return {k.rule, k.gpu, k.code}; }
    static KeyView view(const KeyView& k) { return k; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const KeyView x = view(a);
      const KeyView y = view(b);
      return std::tie(x.rule, x.gpu, x.code) < std::tie(y.rule, y.gpu, y.code);
    }
  };
  struct Track {
    Phase phase = Phase::Inactive;
    double since = 0;
    double fired_at = 0;
    double clear_since = 0;
    double last_seen = 0;
    std::optional<double> quiet_s;
    bool resolve_now = false;
    Severity severity = Severity::Warning;
    std::string message;
    std::vector<std::string> fixes;
    int count = 0;
  };

  Track& track(std::string_view rule, int gpu, long code);
  // Advances the machine; true when the alert starts firing now.
  static bool step(Track& tr, const RuleSettings& rule, double t, RuleVerdict verdict);
  void emit_firing(Track& tr, const RuleSettings& rule, int gpu, double t, AlertText text);
  void emit_resolved(Track& tr, const std::string& rule, int gpu, double t);

  std::map<Key, Track, KeyLess> tracks_;
  std::vector<AlertEvent> events_;
};

}  // namespace gpulens::diagnosis

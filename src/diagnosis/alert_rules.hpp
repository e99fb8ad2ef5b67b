// SPDX-License-Identifier: Apache-2.0
#pragma once
// Alert rules: each looks at one GPU's window, state and history and says fire,
// hold or clear. Timing (for, clear_for), hysteresis bookkeeping and events are
// the tracker's job (alert_tracker.hpp); rules only judge.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/alert_config.hpp"
#include "diagnosis/classifier.hpp"
#include "diagnosis/fixes.hpp"
#include "diagnosis/memory_trend.hpp"

namespace gpulens::diagnosis {

struct DiagnosisConfig;

struct RuleInput {
  int gpu = 0;
  double t = 0;
  const WindowStats& window;
  const HardwareLimits& hw;
  const Thresholds& thresholds;
  const StateFinding& state;
  const ThrottleFinding& throttle;
  const MemoryTrend* memory = nullptr;  // nullptr until enough history
  const std::vector<PeerActivity>& peers;
  const FixContext& fix;
  double state_since = 0;  // when the current state began (for idle durations)
};

// Fire: the firing condition holds. Clear: the (hysteresis) clear condition
// holds. Hold: in between, or the metrics needed are missing.
enum class RuleVerdict : std::uint8_t { Fire, Hold, Clear };

struct AlertText {
  std::string message;
  std::vector<Evidence> evidence;
  std::vector<std::string> fixes;
};

class AlertRule {
 public:
  explicit AlertRule(RuleSettings settings) : settings_(std::move(settings)) {}
  virtual ~AlertRule() = default;
  const RuleSettings& settings() const { return settings_; }
  virtual RuleVerdict check(const RuleInput& in) const = 0;
  // Called only when the alert fires, so building words costs nothing per tick.
  virtual AlertText describe(const RuleInput& in) const = 0;

 protected:
  RuleSettings settings_;
};

// The enabled rules that judge windows (xid_error and gpu_lost come from marks
// and are raised by the engine itself), custom rules last.
std::vector<std::unique_ptr<AlertRule>> make_alert_rules(const DiagnosisConfig& config);

// Window value of a custom rule's metric key (trace key or derived key).
std::optional<double> rule_metric_value(const std::string& key, const WindowStats& window,
                                        const HardwareLimits& hw);

// Verbatim messages of Packet.ai's two rules.
inline constexpr const char* kHighUtilLowActivityMessage =
    "Your GPU shows high utilization but low compute activity. This often indicates a "
    "communication or memory bottleneck.";
inline constexpr const char* kLowEfficiencyMessage =
    "GPU efficiency is low. Workload may be I/O bound.";

}  // namespace gpulens::diagnosis

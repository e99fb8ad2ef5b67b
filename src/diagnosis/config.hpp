// SPDX-License-Identifier: Apache-2.0
#pragma once
// Everything a user can tune about the diagnosis: the window, the classifier's
// thresholds, hardware facts the driver does not give, and the alert rules.
// Loaded from TOML (docs/diagnosis.md, data/alerts.example.toml).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "diagnosis/alert_config.hpp"
#include "diagnosis/hardware.hpp"
#include "diagnosis/job_groups.hpp"
#include "diagnosis/kernel_evidence.hpp"
#include "diagnosis/thresholds.hpp"
#include "diagnosis/window.hpp"

namespace gpulens::diagnosis {

struct DiagnosisConfig {
  WindowSettings window;
  // A "NAME:start"/"NAME:end" mark says the workload changed: restart windows.
  bool reset_on_phase_marks = true;
  JobGrouping job_grouping = JobGrouping::Auto;
  std::optional<double> price_per_gpu_hour;  // for the cost of idle GPUs
  std::string currency = "$";
  Thresholds thresholds;
  HardwareSettings hardware;
  std::vector<RuleSettings> rules;  // every built-in rule, in table order
  std::vector<CustomRule> custom_rules;
  // Not from TOML: the kernel view of the recording (`run --kernels`), handed in
  // by the command that has it; the fixes name what it saw.
  std::optional<KernelEvidence> kernels;

  // Defaults for everything, with every built-in rule enabled.
  static DiagnosisConfig defaults();
  // A built-in rule's settings; the id must be one of builtin_rule_specs().
  const RuleSettings& rule(std::string_view id) const;
  RuleSettings& rule(std::string_view id);
};

// Errors name the file, line and column, and for an unknown key the keys that
// would have been accepted.
Result<DiagnosisConfig> load_diagnosis_config(const std::string& path);
Result<DiagnosisConfig> parse_diagnosis_config(std::string_view text,
                                               const std::string& source_name);

// Limits on config values (docs/reliability.md): a window of `inf` never drops a
// sample, so every duration a config gives is finite and at most 30 days.
inline constexpr double kMaxConfigDurationS = 30.0 * 86400;
inline constexpr std::size_t kMaxCustomRules = 1000;
// Why a duration of `seconds` for `key` is refused; nullopt when it is fine.
std::optional<std::string> duration_problem(double seconds, std::string_view key);
// Why a rule parameter is refused: keys ending _s (seconds) or _h (hours) are
// durations, bucket_s and lookback_s more than 0; nullopt when it is fine.
std::optional<std::string> param_problem(std::string_view key, double value);

}  // namespace gpulens::diagnosis

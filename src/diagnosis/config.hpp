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
#include "diagnosis/thresholds.hpp"
#include "diagnosis/window.hpp"

namespace gpulens {

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

// "90s", "10m", "1.5h", "250ms" or a bare number of seconds.
std::optional<double> parse_duration_s(std::string_view text);

}  // namespace gpulens

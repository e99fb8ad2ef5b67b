// SPDX-License-Identifier: Apache-2.0
#pragma once
// Settings of the alert rules: the built-in rules' table (ids, defaults, tunable
// parameters) and user-defined threshold rules. The config loader, the rule
// engine and docs/diagnosis.md all follow this table.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diagnosis/state.hpp"

namespace gpulens::diagnosis {

struct ParamSpec {
  std::string_view key;
  double value;
  std::string_view doc;
};

struct RuleSpec {
  std::string_view id;
  Severity severity;
  double for_s;        // how long the condition must hold before the alert fires
  double clear_for_s;  // how long the clear condition must hold before it resolves
  std::vector<ParamSpec> params;
  std::string_view doc;
};

const std::vector<RuleSpec>& builtin_rule_specs();
const RuleSpec* find_rule_spec(std::string_view id);

struct RuleSettings {
  std::string id;
  bool enabled = true;
  Severity severity = Severity::Warning;
  double for_s = 0;
  double clear_for_s = 0;
  std::vector<std::pair<std::string, double>> params;
  // The parameter's value; 0 when the rule has no such parameter (a bug).
  double param(std::string_view key) const;
  void set_param(std::string_view key, double value);
};

RuleSettings default_rule_settings(const RuleSpec& spec);

enum class CompareOp : std::uint8_t { Greater, GreaterEqual, Less, LessEqual, Equal, NotEqual };
std::optional<CompareOp> compare_op_from_text(std::string_view text);
std::string_view compare_op_text(CompareOp op);
bool compare(double value, CompareOp op, double threshold);

// A user rule: fires when the window mean of `metric` compares true with
// `value` for `for_s`; resolves when it no longer compares true with `clear`
// (hysteresis; defaults to `value`).
struct CustomRule {
  std::string name;
  std::string metric;  // a trace metric key, or a derived key (derived_metric_keys())
  CompareOp op = CompareOp::GreaterEqual;
  double value = 0;
  std::optional<double> clear;
  double for_s = 0;
  double clear_for_s = 0;
  Severity severity = Severity::Warning;
  std::string message;
  bool enabled = true;
};

// Keys a custom rule may use besides the trace metric keys.
const std::vector<std::string_view>& derived_metric_keys();

}  // namespace gpulens::diagnosis

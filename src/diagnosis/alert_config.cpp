// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/alert_config.hpp"

#include <array>

namespace gpulens::diagnosis {

const std::vector<RuleSpec>& builtin_rule_specs() {
  static const std::vector<RuleSpec> specs{
      {"high_util_low_activity",
       Severity::Warning,
       30,
       0,
       {{"util_min", 80, "fires at utilization (%) at or above"},
        {"sm_active_max", 30, "fires at SM activity (%) below"},
        {"util_clear", 75, "resolves at utilization (%) below"},
        {"sm_active_clear", 35, "resolves at SM activity (%) at or above"}},
       "Packet.ai: high utilization but low compute activity"},
      {"low_efficiency",
       Severity::Warning,
       30,
       0,
       {{"util_min", 50, "fires at utilization (%) at or above"},
        {"ratio_max", 0.3, "fires at sm_active/gpu_util below"},
        {"util_clear", 45, "resolves at utilization (%) below"},
        {"ratio_clear", 0.35, "resolves at sm_active/gpu_util at or above"}},
       "Packet.ai: GPU efficiency is low"},
      {"stalled",
       Severity::Critical,
       60,
       0,
       {{"util_min", 50, "a kernel is resident: utilization (%) at or above"},
        {"pipe_active_max", 0.05,
         "no math: every tensor/FP16/FP32/FP64 pipe (%, window maximum) below"},
        {"int_share_max", 0.2,
         "no integer work: integer pipe over SM activity (window means) below; a spin-wait "
         "issues a few percent, integer compute most of it"},
        {"dram_active_max", 0.1, "no memory traffic: DRAM bandwidth (%, window maximum) below"},
        {"power_share_max", 0.5, "power low for the activity: board power over its limit below"},
        {"sm_active_range_max", 2, "nothing changes: SM activity range (points) in the window"},
        {"memory_range_max_mib", 64, "nothing changes: memory range (MiB) in the window"},
        {"link_share_max", 0.01, "no traffic: PCIe and NVLink over their bandwidth below"}},
       "a kernel is resident on any number of SMs, but no pipe, DRAM or link works and nothing "
       "changes (a hung collective)"},
      {"memory_growth",
       Severity::Warning,
       0,
       60,
       {{"lookback_s", 600, "history (s) the trend is fitted over"},
        {"min_span_s", 60, "history (s) needed before a verdict"},
        {"bucket_s", 5, "one peak reading per bucket (s)"},
        {"min_r2", 0.8, "fit quality of the line"},
        {"min_rising_share", 0.6, "share of buckets that rise"},
        {"max_step_share", 0.5, "largest single rise over the total (above: a one-time step)"},
        {"max_drawdown_share", 0.1,
         "largest fall since the onset over the rise (above: a saw-tooth)"},
        {"max_prior_peak_share", 0.5,
         "level before the onset over the growth since (above: an earlier tooth)"},
        {"min_growth_mib", 256, "rise (MiB) over the span worth an alert"},
        {"max_time_to_oom_h", 24, "forecast (h) beyond which it is not urgent"},
        {"fast_min_span_s", 3,
         "fast path: a rise judged on the readings of the last min_span_s once it has lasted "
         "this long (s); 0: no fast path"},
        {"fast_horizon_factor", 2,
         "fast path: fires when the device fills within this many times as long as memory "
         "has been rising"}},
       "device memory rising steadily, with a time-to-out-of-memory forecast"},
      {"idle_holding_memory",
       Severity::Warning,
       600,
       0,
       {},
       "no kernel runs while a process holds a large share of device memory"},
      {"throttled", Severity::Warning, 60, 10, {}, "clocks held down by power or heat"},
      {"gpu_imbalance",
       Severity::Warning,
       60,
       0,
       {{"points", 40, "fires at an SM activity gap (points) above"},
        {"clear_points", 30, "resolves at a gap (points) below"}},
       "GPUs of one job differ widely in SM activity"},
      {"xid_error",
       Severity::Critical,
       0,
       0,
       {{"quiet_s", 600, "resolves after this long (s) without a repeat"}},
       "the driver reported an XID error"},
      {"gpu_lost", Severity::Critical, 0, 0, {}, "the GPU stopped answering"},
  };
  return specs;
}

const RuleSpec* find_rule_spec(std::string_view id) {
  for (const auto& s : builtin_rule_specs()) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

double RuleSettings::param(std::string_view key) const {
  for (const auto& [k, v] : params) {
    if (k == key) return v;
  }
  return 0.0;
}

void RuleSettings::set_param(std::string_view key, double value) {
  for (auto& [k, v] : params) {
    if (k == key) {
      v = value;
      return;
    }
  }
  params.emplace_back(std::string(key), value);
}

RuleSettings default_rule_settings(const RuleSpec& spec) {
  RuleSettings s;
  s.id = std::string(spec.id);
  s.severity = spec.severity;
  s.for_s = spec.for_s;
  s.clear_for_s = spec.clear_for_s;
  for (const auto& p : spec.params) s.params.emplace_back(std::string(p.key), p.value);
  return s;
}

namespace {
constexpr std::array<std::pair<CompareOp, std::string_view>, 6> kOps{{
    {CompareOp::Greater, ">"},
    {CompareOp::GreaterEqual, ">="},
    {CompareOp::Less, "<"},
    {CompareOp::LessEqual, "<="},
    {CompareOp::Equal, "=="},
    {CompareOp::NotEqual, "!="},
}};
}  // namespace

std::optional<CompareOp> compare_op_from_text(std::string_view text) {
  for (const auto& [op, t] : kOps) {
    if (t == text) return op;
  }
  return std::nullopt;
}

std::string_view compare_op_text(CompareOp op) {
  for (const auto& [o, t] : kOps) {
    if (o == op) return t;
  }
  return "?";
}

bool compare(double value, CompareOp op, double threshold) {
  switch (op) {
    case CompareOp::Greater:
      return value > threshold;
    case CompareOp::GreaterEqual:
      return value >= threshold;
    case CompareOp::Less:
      return value < threshold;
    case CompareOp::LessEqual:
      return value <= threshold;
    case CompareOp::Equal:
      return value == threshold;
    case CompareOp::NotEqual:
      return value != threshold;
  }
  return false;
}

const std::vector<std::string_view>& derived_metric_keys() {
  static const std::vector<std::string_view> keys{"efficiency", "sm_ratio",      "mem_used_pct",
                                                  "power_pct",  "pcie_link_pct", "nvlink_link_pct"};
  return keys;
}

}  // namespace gpulens::diagnosis

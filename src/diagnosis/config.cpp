// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/config.hpp"

#include <fmt/format.h>
// toml++ 3.3 asserts that a table header's first character begins a key before
// it checks ("[#" aborted debug builds; found by fuzz_config). Release builds
// skip the assertion and report the error properly: so do all builds.
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include "core/duration.hpp"
#include "core/metric.hpp"

namespace gpulens::diagnosis {

std::optional<std::string> duration_problem(double seconds, std::string_view key) {
  if (!std::isfinite(seconds) || seconds > kMaxConfigDurationS) {
    return fmt::format("{} is longer than {} days (the longest duration a config may give)", key,
                       kMaxConfigDurationS / 86400);
  }
  return std::nullopt;
}

std::optional<std::string> param_problem(std::string_view key, double value) {
  const bool seconds = key.ends_with("_s"), hours = key.ends_with("_h");
  if (!seconds && !hours) return std::nullopt;
  // Buckets and look-backs divide time: zero would never advance.
  const bool positive = key == "bucket_s" || key == "lookback_s";
  if (positive ? !(value > 0) : value < 0) {
    return fmt::format("{} = {} must be {} 0", key, value, positive ? "more than" : "at least");
  }
  return duration_problem(hours ? value * 3600 : value, key);
}

namespace {

// Every problem found while reading, as "file:line:col: message".
class ConfigReader {
 public:
  explicit ConfigReader(std::string name) : name_(std::move(name)) {}

  Status read(const toml::table& root, DiagnosisConfig& cfg) {
    for (auto&& [key, node] : root) {
      const std::string k(key.str());
      if (k == "diagnosis") {
        read_diagnosis(node, cfg);
      } else if (k == "thresholds") {
        read_thresholds(node, cfg.thresholds);
      } else if (k == "hardware") {
        read_hardware(node, cfg.hardware);
      } else if (k == "alerts") {
        read_alerts(node, cfg);
      } else {
        fail(node, fmt::format("unknown section [{}] (known: diagnosis, thresholds, hardware, "
                               "alerts)",
                               k));
      }
      if (!error_.empty()) return Error{error_};
    }
    return ok_status();
  }

 private:
  void fail(const toml::node& node, const std::string& message) {
    if (!error_.empty()) return;
    const auto& src = node.source();
    error_ = fmt::format("{}:{}:{}: {}", name_, src.begin.line, src.begin.column, message);
  }

  const toml::table* table(const toml::node& node, std::string_view what) {
    const auto* t = node.as_table();
    if (!t) fail(node, fmt::format("{} must be a table", what));
    return t;
  }

  std::optional<double> number(const toml::node& node, std::string_view key, double lo = -1e300,
                               double hi = 1e300) {
    const auto v = node.value<double>();
    if (!v || !std::isfinite(*v)) {
      fail(node, fmt::format("{} must be a number", key));
      return std::nullopt;
    }
    if (*v < lo || *v > hi) {
      fail(node, fmt::format("{} = {} is out of range [{}, {}]", key, *v, lo, hi));
      return std::nullopt;
    }
    return v;
  }

  std::optional<double> duration(const toml::node& node, std::string_view key) {
    std::optional<double> v;
    if (const auto text = node.value<std::string>()) {
      // Text follows the one grammar (core/duration.hpp, docs/durations.md),
      // whose message says what is wrong with it.
      const auto parsed = parse_duration(*text);
      if (!parsed) {
        fail(node, fmt::format("{}: {}", key, parsed.error().message));
        return std::nullopt;
      }
      v = *parsed;
    } else if (node.is_number()) {
      v = node.value<double>();
    }
    if (!v || std::isnan(*v) || *v < 0) {
      fail(node, fmt::format("{} must be a duration such as 90, \"90s\", \"10m\" or \"1h\"", key));
      return std::nullopt;
    }
    if (auto problem = duration_problem(*v, key)) {
      fail(node, *problem);
      return std::nullopt;
    }
    return v;
  }

  // A rule parameter: durations (key ending _s or _h) within config_duration_limit_s(),
  // every other parameter finite.
  std::optional<double> param(const toml::node& node, std::string_view key) {
    const auto v = number(node, key);
    if (!v) return v;
    if (auto problem = param_problem(key, *v)) {
      fail(node, *problem);
      return std::nullopt;
    }
    return v;
  }

  std::optional<bool> boolean(const toml::node& node, std::string_view key) {
    const auto v = node.value<bool>();
    if (!v) fail(node, fmt::format("{} must be true or false", key));
    return v;
  }

  std::optional<std::string> text(const toml::node& node, std::string_view key) {
    auto v = node.value<std::string>();
    if (!v) fail(node, fmt::format("{} must be a string", key));
    return v;
  }

  // One word of a fixed set: `parse` gives its value, or the error lists the `known` words.
  template <typename T>
  std::optional<T> choice(const toml::node& node, std::string_view key,
                          std::optional<T> (*parse)(std::string_view), std::string_view known) {
    const auto word = text(node, key);
    if (!word) return std::nullopt;
    auto value = parse(*word);
    if (!value) fail(node, fmt::format("{} \"{}\" unknown (known: {})", key, *word, known));
    return value;
  }

  std::optional<Severity> severity(const toml::node& node) {
    return choice(node, "severity", severity_from_id, "info, warning, critical");
  }

  void unknown_key(const toml::node& node, const std::string& key, std::string_view where,
                   const std::vector<std::string>& known) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    fail(node, fmt::format("unknown key '{}' in [{}] (known: {})", key, where, list));
  }

  void read_diagnosis(const toml::node& node, DiagnosisConfig& cfg) {
    const auto* t = table(node, "[diagnosis]");
    if (!t) return;
    for (auto&& [key, v] : *t) {
      const std::string k(key.str());
      if (k == "window") {
        if (auto d = duration(v, k)) cfg.window.length_s = *d;
        if (cfg.window.length_s <= 0) fail(v, "window must be longer than 0 s");
      } else if (k == "change_min") {
        if (auto d = duration(v, k)) cfg.window.change_min_s = *d;
      } else if (k == "change_min_shift") {
        if (auto d = number(v, k, 0, 100)) cfg.window.change_min_shift = *d;
      } else if (k == "reset_on_phase_marks") {
        if (auto b = boolean(v, k)) cfg.reset_on_phase_marks = *b;
      } else if (k == "job_grouping") {
        if (auto mode = choice(v, k, job_grouping_from_id, "auto, all, process"))
          cfg.job_grouping = *mode;
      } else if (k == "price_per_gpu_hour") {
        if (auto d = number(v, k, 0)) cfg.price_per_gpu_hour = *d;
      } else if (k == "currency") {
        if (auto s = text(v, k)) cfg.currency = *s;
      } else {
        unknown_key(v, k, "diagnosis",
                    {"window", "change_min", "change_min_shift", "reset_on_phase_marks",
                     "job_grouping", "price_per_gpu_hour", "currency"});
      }
    }
  }

  void read_thresholds(const toml::node& node, Thresholds& th) {
    const auto* t = table(node, "[thresholds]");
    if (!t) return;
    for (auto&& [key, v] : *t) {
      const std::string k(key.str());
      const ThresholdSpec* spec = nullptr;
      for (const auto& s : threshold_specs()) {
        if (s.key == k) spec = &s;
      }
      if (!spec) {
        std::vector<std::string> known;
        for (const auto& s : threshold_specs()) known.emplace_back(s.key);
        unknown_key(v, k, "thresholds", known);
        continue;
      }
      if (auto d = number(v, k, spec->min, spec->max)) th.*(spec->field) = *d;
    }
  }

  void read_hardware(const toml::node& node, HardwareSettings& hw) {
    const auto* t = table(node, "[hardware]");
    if (!t) return;
    for (auto&& [key, v] : *t) {
      const std::string k(key.str());
      if (k == "dram_practical_peak_pct") {
        if (auto d = number(v, k, 1, 100)) hw.dram_practical_peak_pct = *d;
      } else if (k == "pcie_gbytes_s") {
        if (auto d = number(v, k, 0.001)) hw.pcie_mibs = *d * kMibPerGb;
      } else if (k == "nvlink_links") {
        if (auto d = number(v, k, 0, 64)) hw.nvlink_links = static_cast<int>(*d);
      } else if (k == "nvlink_link_gbytes_s") {
        if (auto d = number(v, k, 0.001)) hw.nvlink_link_gbytes_s = *d;
      } else {
        unknown_key(
            v, k, "hardware",
            {"dram_practical_peak_pct", "pcie_gbytes_s", "nvlink_links", "nvlink_link_gbytes_s"});
      }
    }
  }

  void read_alerts(const toml::node& node, DiagnosisConfig& cfg) {
    const auto* t = table(node, "[alerts]");
    if (!t) return;
    for (auto&& [key, v] : *t) {
      const std::string k(key.str());
      if (k == "custom") {
        read_custom_rules(v, cfg);
      } else if (find_rule_spec(k)) {
        read_rule(v, cfg.rule(k));
      } else {
        std::vector<std::string> known;
        for (const auto& s : builtin_rule_specs()) known.emplace_back(s.id);
        known.emplace_back("custom");
        fail(v, fmt::format("unknown alert rule [alerts.{}] (known: {})", k, [&] {
               std::string l;
               for (const auto& n : known) l += (l.empty() ? "" : ", ") + n;
               return l;
             }()));
      }
      if (!error_.empty()) return;
    }
  }

  // The keys every rule has, built-in or custom: true when `k` was one of them.
  template <typename Rule>
  bool read_common_rule_key(const std::string& k, const toml::node& v, Rule& rule) {
    if (k == "enabled") {
      if (auto b = boolean(v, k)) rule.enabled = *b;
    } else if (k == "for") {
      if (auto d = duration(v, k)) rule.for_s = *d;
    } else if (k == "clear_for") {
      if (auto d = duration(v, k)) rule.clear_for_s = *d;
    } else if (k == "severity") {
      if (auto s = severity(v)) rule.severity = *s;
    } else {
      return false;
    }
    return true;
  }

  void read_rule(const toml::node& node, RuleSettings& rule) {
    const std::string where = "alerts." + rule.id;
    const auto* t = table(node, "[" + where + "]");
    if (!t) return;
    for (auto&& [key, v] : *t) {
      const std::string k(key.str());
      if (read_common_rule_key(k, v, rule)) {
        continue;
      } else if (std::any_of(rule.params.begin(), rule.params.end(),
                             [&](const auto& p) { return p.first == k; })) {
        if (auto d = param(v, k)) rule.set_param(k, *d);
      } else {
        std::vector<std::string> known{"enabled", "for", "clear_for", "severity"};
        for (const auto& p : rule.params) known.push_back(p.first);
        unknown_key(v, k, where, known);
      }
    }
  }

  void read_custom_rules(const toml::node& node, DiagnosisConfig& cfg) {
    const auto* arr = node.as_array();
    if (!arr) {
      fail(node, "custom rules are written [[alerts.custom]] (an array of tables)");
      return;
    }
    if (arr->size() > kMaxCustomRules) {
      fail(node,
           fmt::format("{} custom rules (at most {} in one file)", arr->size(), kMaxCustomRules));
      return;
    }
    std::unordered_set<std::string> names;
    for (const auto& other : cfg.custom_rules) names.insert(other.name);
    for (const auto& item : *arr) {
      const auto* t = table(item, "[[alerts.custom]]");
      if (!t) return;
      CustomRule rule;
      bool has_metric = false, has_value = false;
      for (auto&& [key, v] : *t) {
        const std::string k(key.str());
        if (read_common_rule_key(k, v, rule)) {
          continue;
        } else if (k == "name") {
          if (auto s = text(v, k)) rule.name = *s;
        } else if (k == "metric") {
          if (auto s = text(v, k)) rule.metric = *s;
          has_metric = true;
          const bool known = metric_from_key(rule.metric).has_value() ||
                             std::find(derived_metric_keys().begin(), derived_metric_keys().end(),
                                       rule.metric) != derived_metric_keys().end();
          if (!known)
            fail(v, fmt::format("metric \"{}\" unknown: use a trace metric key "
                                "(gpu_util, sm_active, temp_c, ...) or one of "
                                "efficiency, sm_ratio, mem_used_pct, power_pct, "
                                "pcie_link_pct, nvlink_link_pct",
                                rule.metric));
        } else if (k == "op") {
          if (auto op = choice(v, k, compare_op_from_text, ">, >=, <, <=, ==, !=")) rule.op = *op;
        } else if (k == "value") {
          if (auto d = number(v, k)) rule.value = *d;
          has_value = true;
        } else if (k == "clear") {
          if (auto d = number(v, k)) rule.clear = *d;
        } else if (k == "message") {
          if (auto s = text(v, k)) rule.message = *s;
        } else {
          unknown_key(v, k, "[alerts.custom]",
                      {"name", "metric", "op", "value", "clear", "for", "clear_for", "severity",
                       "message", "enabled"});
        }
      }
      if (!error_.empty()) return;
      if (rule.name.empty()) return fail(item, "a custom rule needs a name");
      if (find_rule_spec(rule.name)) {
        return fail(item, fmt::format("custom rule name \"{}\" is a built-in rule's", rule.name));
      }
      if (!has_metric)
        return fail(item, fmt::format("custom rule \"{}\" needs a metric", rule.name));
      if (!has_value) return fail(item, fmt::format("custom rule \"{}\" needs a value", rule.name));
      if (!names.insert(rule.name).second) {
        return fail(item, fmt::format("custom rule \"{}\" is defined twice", rule.name));
      }
      if (rule.message.empty()) {
        rule.message = fmt::format("{} {} {}", rule.metric, compare_op_text(rule.op), rule.value);
      }
      cfg.custom_rules.push_back(std::move(rule));
    }
  }

  std::string name_;
  std::string error_;
};

}  // namespace

DiagnosisConfig DiagnosisConfig::defaults() {
  DiagnosisConfig cfg;
  for (const auto& spec : builtin_rule_specs()) cfg.rules.push_back(default_rule_settings(spec));
  return cfg;
}

const RuleSettings& DiagnosisConfig::rule(std::string_view id) const {
  for (const auto& r : rules) {
    if (r.id == id) return r;
  }
  throw std::out_of_range("no built-in alert rule " + std::string(id));
}

RuleSettings& DiagnosisConfig::rule(std::string_view id) {
  for (auto& r : rules) {
    if (r.id == id) return r;
  }
  // A config built by hand may lack rules; add the default on first use.
  if (const auto* spec = find_rule_spec(id))
    return rules.emplace_back(default_rule_settings(*spec));
  throw std::out_of_range("no built-in alert rule " + std::string(id));
}

namespace {

// "file:line:col" of byte `at` of `text`.
std::string place(std::string_view text, std::size_t at, const std::string& source_name) {
  const auto before = text.substr(0, at);
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const auto line_start = before.rfind('\n');
  const auto col = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return fmt::format("{}:{}:{}", source_name, line, col);
}

// The first non-ASCII byte. toml++ 3.3 must not see one outside a string: its
// whitespace test reaches __builtin_unreachable on some letters (U+0425, U+0357;
// found by fuzz_config), undefined behaviour rather than an error, and on invalid
// input its idea of "inside a string" is not one a pre-scan can follow. So the
// file is ASCII; a string writes other characters as \uXXXX escapes.
std::optional<std::size_t> first_non_ascii(std::string_view t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (static_cast<unsigned char>(t[i]) >= 0x80) return i;
  }
  return std::nullopt;
}

}  // namespace

Result<DiagnosisConfig> parse_diagnosis_config(std::string_view text,
                                               const std::string& source_name) {
  DiagnosisConfig cfg = DiagnosisConfig::defaults();
  // TOML allows no NUL: refused here with its place, before the parser sees it.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    return Error{fmt::format("{}: a NUL byte (TOML allows no control characters)",
                             place(text, nul, source_name))};
  }
  if (const auto byte = first_non_ascii(text)) {
    return Error{
        fmt::format("{}: a non-ASCII character (a config file is ASCII: write it in a "
                    "string as a \\uXXXX escape, e.g. \"\\u20AC\" for the euro sign)",
                    place(text, *byte, source_name))};
  }
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    return Error{fmt::format("{}:{}:{}: {}", source_name, e.source().begin.line,
                             e.source().begin.column, e.description())};
  }
  ConfigReader reader(source_name);
  if (auto st = reader.read(root, cfg); !st) return st.error();
  return cfg;
}

Result<DiagnosisConfig> load_diagnosis_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{fmt::format("cannot read config file {}", path)};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_diagnosis_config(text.str(), path);
}

}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
// The TOML config: defaults, overrides, custom rules, and clear errors.
#include "diagnosis/config.hpp"

#include <gtest/gtest.h>

namespace gpulens::diagnosis {
namespace {

std::string error_of(const std::string& toml) {
  auto cfg = parse_diagnosis_config(toml, "alerts.toml");
  return cfg.ok() ? std::string("(no error)") : cfg.error().message;
}

TEST(Config, DefaultsHaveEveryBuiltInRule) {
  const auto cfg = DiagnosisConfig::defaults();
  EXPECT_EQ(cfg.rules.size(), builtin_rule_specs().size());
  EXPECT_EQ(cfg.rule("stalled").for_s, 60);
  EXPECT_EQ(cfg.rule("idle_holding_memory").for_s, 600);
  EXPECT_EQ(cfg.rule("gpu_imbalance").param("points"), 40);
  EXPECT_EQ(cfg.window.length_s, 5);
}

TEST(Config, ShippedExampleParsesAndMatchesTheDefaults) {
  auto cfg = load_diagnosis_config(std::string(GPULENS_SOURCE_DIR) + "/data/alerts.example.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  const auto defaults = DiagnosisConfig::defaults();
  for (const auto& r : defaults.rules) {
    EXPECT_EQ(cfg->rule(r.id).for_s, r.for_s) << r.id;
    EXPECT_EQ(cfg->rule(r.id).enabled, r.enabled) << r.id;
    for (const auto& [k, v] : r.params) EXPECT_EQ(cfg->rule(r.id).param(k), v) << r.id << "." << k;
  }
  for (const auto& spec : threshold_specs()) {
    EXPECT_EQ(cfg->thresholds.*(spec.field), defaults.thresholds.*(spec.field)) << spec.key;
  }
  ASSERT_EQ(cfg->custom_rules.size(), 2u);
  EXPECT_EQ(cfg->custom_rules[0].name, "hot_gpu");
  EXPECT_EQ(*cfg->custom_rules[0].clear, 80);
}

TEST(Config, OverridesAndDurations) {
  auto cfg = parse_diagnosis_config(R"(
[diagnosis]
window = "10s"
job_grouping = "all"
price_per_gpu_hour = 3.2
[thresholds]
busy_ratio_min = 0.7
[hardware]
pcie_gbytes_s = 31.5
nvlink_links = 12
[alerts.stalled]
for = "2m"
severity = "warning"
pipe_active_max = 0.1
[alerts.memory_growth]
enabled = false
)",
                                    "t.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->window.length_s, 10);
  EXPECT_EQ(cfg->job_grouping, JobGrouping::AllWatched);
  EXPECT_EQ(*cfg->price_per_gpu_hour, 3.2);
  EXPECT_EQ(cfg->thresholds.busy_ratio_min, 0.7);
  EXPECT_NEAR(*cfg->hardware.pcie_mibs, 31.5e9 / 1048576, 1);
  EXPECT_EQ(*cfg->hardware.nvlink_links, 12);
  EXPECT_EQ(cfg->rule("stalled").for_s, 120);
  EXPECT_EQ(cfg->rule("stalled").severity, Severity::Warning);
  EXPECT_EQ(cfg->rule("stalled").param("pipe_active_max"), 0.1);
  EXPECT_FALSE(cfg->rule("memory_growth").enabled);
}

TEST(Config, ErrorsNameFileLineAndWhatWouldWork) {
  const auto typo = error_of("[alerts.stalled]\npipe_activ_max = 3\n");
  EXPECT_NE(typo.find("alerts.toml:2:"), std::string::npos) << typo;
  EXPECT_NE(typo.find("unknown key 'pipe_activ_max'"), std::string::npos) << typo;
  EXPECT_NE(typo.find("pipe_active_max"), std::string::npos) << typo;
  // The SM share says nothing about a hang (a hung collective may hold any
  // number of SMs): the stalled rule no longer has an SM threshold.
  EXPECT_NE(error_of("[alerts.stalled]\nsm_active_max = 10\n").find("unknown key"),
            std::string::npos);

  EXPECT_NE(error_of("[alerts.stalld]\n").find("unknown alert rule"), std::string::npos);
  EXPECT_NE(error_of("[alert]\n").find("unknown section [alert]"), std::string::npos);
  EXPECT_NE(error_of("[thresholds]\nbusy_ratio_min = \"high\"\n").find("must be a number"),
            std::string::npos);
  EXPECT_NE(error_of("[thresholds]\nbusy_ratio_min = 3\n").find("out of range"), std::string::npos);
  EXPECT_NE(error_of("[alerts.throttled]\nfor = \"soon\"\n").find("is not a duration"),
            std::string::npos);
  EXPECT_NE(error_of("[alerts.throttled]\nseverity = \"fatal\"\n").find("severity \"fatal\""),
            std::string::npos);
  EXPECT_NE(error_of("[diagnosis\nwindow = 5\n").find("alerts.toml:1:"), std::string::npos);
}

// A word outside its set names the word and every word that would work.
TEST(Config, UnknownWordsListTheKnownOnes) {
  EXPECT_NE(error_of("[alerts.throttled]\nseverity = \"fatal\"\n")
                .find("severity \"fatal\" unknown (known: info, warning, critical)"),
            std::string::npos);
  EXPECT_NE(error_of("[diagnosis]\njob_grouping = \"node\"\n")
                .find("job_grouping \"node\" unknown (known: auto, all, process)"),
            std::string::npos);
  EXPECT_NE(error_of("[[alerts.custom]]\nname = \"x\"\nmetric = \"temp_c\"\nop = \"=>\"\n"
                     "value = 1\n")
                .find("op \"=>\" unknown (known: >, >=, <, <=, ==, !=)"),
            std::string::npos);
  EXPECT_NE(error_of("[diagnosis]\njob_grouping = 3\n").find("job_grouping must be a string"),
            std::string::npos);
}

TEST(Config, CustomRuleErrors) {
  EXPECT_NE(error_of("[[alerts.custom]]\nname = \"x\"\nmetric = \"tempc\"\nvalue = 1\n")
                .find("metric \"tempc\" unknown"),
            std::string::npos);
  EXPECT_NE(error_of("[[alerts.custom]]\nname = \"x\"\nmetric = \"temp_c\"\nop = \"=>\"\n"
                     "value = 1\n")
                .find("op \"=>\" unknown"),
            std::string::npos);
  EXPECT_NE(error_of("[[alerts.custom]]\nname = \"x\"\nvalue = 1\n").find("needs a metric"),
            std::string::npos);
  EXPECT_NE(error_of("[[alerts.custom]]\nmetric = \"temp_c\"\nvalue = 1\n").find("needs a name"),
            std::string::npos);
  EXPECT_NE(error_of("[[alerts.custom]]\nname = \"stalled\"\nmetric = \"temp_c\"\nvalue = 1\n")
                .find("built-in"),
            std::string::npos);
  EXPECT_NE(error_of("[alerts.custom]\nname = \"x\"\n").find("array of tables"), std::string::npos);
}

TEST(Config, CustomRuleDefaults) {
  auto cfg = parse_diagnosis_config(
      "[[alerts.custom]]\nname = \"eff\"\nmetric = \"efficiency\"\nop = \"<\"\nvalue = 20\n",
      "t.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  const auto& r = cfg->custom_rules.at(0);
  EXPECT_EQ(r.op, CompareOp::Less);
  EXPECT_EQ(r.severity, Severity::Warning);
  EXPECT_EQ(r.for_s, 0);
  EXPECT_EQ(r.message, "efficiency < 20");
}

TEST(Config, MissingFileIsAClearError) {
  auto cfg = load_diagnosis_config("/nonexistent/alerts.toml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.error().message.find("/nonexistent/alerts.toml"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
// Acceptance: on every phase of the recordings listed in
// tests/fixtures/diagnosis/expected.json, the majority state equals the expected
// diagnosis, expected flags are set, expected alerts fire, and the first fix says
// what the workload's physics calls for and nothing it rules out. New recordings are
// a file plus their cases in that list; nothing here is specific to one file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/trace_reader.hpp"
#include "diagnosis/timeline.hpp"

namespace gpulens::diagnosis {
namespace {

const std::string kFixtures = GPULENS_FIXTURES;

struct Case {
  std::string trace;
  std::string phase;
  int gpu = 0;
  std::string state;
  std::vector<std::string> flags;
  std::vector<std::string> alerts;
  std::vector<std::string> not_alerts;
  std::vector<std::string> fix;      // the first fix contains one of these (any case)
  std::vector<std::string> fix_not;  // ... and none of these
  double alert_grace_s = 5;
  std::string config;
  nlohmann::json job_groups;
  std::string run_key() const { return trace + "|" + config + "|" + job_groups.dump(); }
};

std::vector<Case> load_cases() {
  std::ifstream in(kFixtures + "/diagnosis/expected.json");
  const auto doc = nlohmann::json::parse(in);
  std::vector<Case> out;
  for (const auto& j : doc.at("cases")) {
    Case c;
    c.trace = j.at("trace").get<std::string>();
    c.phase = j.at("phase").get<std::string>();
    c.gpu = j.value("gpu", 0);
    c.state = j.at("state").get<std::string>();
    c.flags = j.value("flags", std::vector<std::string>{});
    c.alerts = j.value("alerts", std::vector<std::string>{});
    c.not_alerts = j.value("not_alerts", std::vector<std::string>{});
    c.fix = j.value("fix", std::vector<std::string>{});
    c.fix_not = j.value("fix_not", std::vector<std::string>{});
    c.alert_grace_s = j.value("alert_grace_s", 5.0);
    c.config = j.value("config", std::string());
    c.job_groups = j.value("job_groups", nlohmann::json::array());
    out.push_back(std::move(c));
  }
  return out;
}

// Readable parameter names in gtest output instead of a byte dump.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.trace << " " << c.phase << " gpu" << c.gpu << " -> " << c.state;
}

const DiagnosisReport& report_for(const Case& c) {
  static std::map<std::string, DiagnosisReport> cache;
  const auto key = c.run_key();
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  // Lenient: real recordings may hold a line the strict reader refuses (a NaN
  // written by an older recorder); it is skipped and counted, not fatal.
  auto trace = read_trace(kFixtures + "/" + c.trace, TraceReadOptions{.lenient = true});
  if (!trace) throw std::runtime_error(trace.error().message);
  DiagnosisConfig config = DiagnosisConfig::defaults();
  if (!c.config.empty()) {
    auto loaded = load_diagnosis_config(kFixtures + "/" + c.config);
    if (!loaded) throw std::runtime_error(loaded.error().message);
    config = std::move(*loaded);
  }
  auto groups = c.job_groups.get<std::vector<std::vector<int>>>();
  return cache.emplace(key, diagnose_trace(*trace, config, groups)).first->second;
}

std::string lowercase(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string shares_text(const StateShares& shares) {
  std::string out;
  for (const auto s : all_states()) {
    if (shares.share(s) > 0) out += fmt::format("{}={:.2f} ", state_id(s), shares.share(s));
  }
  return out;
}

class ReferencePhase : public ::testing::TestWithParam<Case> {};

TEST_P(ReferencePhase, MajorityStateFlagsAndAlerts) {
  const Case& c = GetParam();
  const DiagnosisReport& rep = report_for(c);
  const PhaseSummary* phase = nullptr;
  for (const auto& p : rep.phases) {
    if (p.name == c.phase && p.gpu == c.gpu) phase = &p;
  }
  ASSERT_NE(phase, nullptr) << "no phase " << c.phase << " on GPU " << c.gpu << " in " << c.trace;
  const auto expected = state_from_id(c.state);
  ASSERT_TRUE(expected.has_value()) << "unknown state id in expected.json: " << c.state;
  // Printed for every case so that a run shows how clear each verdict was.
  std::cout << fmt::format("[ shares   ] {} {} gpu{}: {}\n", c.trace, c.phase, c.gpu,
                           shares_text(phase->shares));
  EXPECT_EQ(state_id(phase->state), c.state) << shares_text(phase->shares);
  for (const auto& flag : c.flags) {
    EXPECT_NE(std::find(phase->flags.begin(), phase->flags.end(), flag), phase->flags.end())
        << "flag " << flag << " not set; throttled share " << phase->throttled_share;
  }
  const auto fired = [&](const std::string& rule) {
    for (const auto& a : rep.alerts) {
      if (a.rule == rule && a.gpu == c.gpu && a.fired_at >= phase->start &&
          a.fired_at <= phase->end + c.alert_grace_s)
        return true;
    }
    return false;
  };
  for (const auto& rule : c.alerts) EXPECT_TRUE(fired(rule)) << "alert " << rule << " did not fire";
  for (const auto& rule : c.not_alerts) EXPECT_FALSE(fired(rule)) << "alert " << rule << " fired";

  const std::string first = phase->fixes.empty() ? std::string() : lowercase(phase->fixes.front());
  if (!c.fix.empty()) {
    const bool said = std::any_of(c.fix.begin(), c.fix.end(), [&](const std::string& w) {
      return first.find(lowercase(w)) != std::string::npos;
    });
    EXPECT_TRUE(said) << "first fix: " << (first.empty() ? "(none)" : phase->fixes.front());
  }
  for (const auto& w : c.fix_not) {
    EXPECT_EQ(first.find(lowercase(w)), std::string::npos)
        << "first fix says \"" << w << "\": " << phase->fixes.front();
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.trace + "_" + info.param.phase + "_gpu" +
                     std::to_string(info.param.gpu) + "_" + std::to_string(info.index);
  for (auto& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Recordings, ReferencePhase, ::testing::ValuesIn(load_cases()), case_name);

// Live there may be no phase marks: windows then restart only at level shifts.
// The three reference recordings must still read the same, phase by phase.
TEST(ReferenceWithoutMarks, LevelShiftsAloneFollowThePhases) {
  const std::vector<std::string> reference{"../../examples/calibration-h100.trace.jsonl",
                                           "traces/training-h100.trace.jsonl",
                                           "traces/multi-gpu-h200x2.trace.jsonl"};
  DiagnosisConfig config = DiagnosisConfig::defaults();
  config.reset_on_phase_marks = false;
  std::map<std::string, DiagnosisReport> reports;
  for (const auto& name : reference) {
    auto trace = read_trace(kFixtures + "/" + name, TraceReadOptions{.lenient = true});
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    reports.emplace(name, diagnose_trace(*trace, config));
  }
  for (const auto& c : load_cases()) {
    const auto it = reports.find(c.trace);
    if (it == reports.end() || !c.config.empty()) continue;
    for (const auto& p : it->second.phases) {
      if (p.name != c.phase || p.gpu != c.gpu) continue;
      EXPECT_EQ(state_id(p.state), c.state)
          << c.trace << " " << c.phase << " gpu" << c.gpu << ": " << shares_text(p.shares);
    }
  }
}

}  // namespace
}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
// Issue 44: the job's verdict on a GPU without GPM. The suite's real Hopper
// recordings with every GPM field taken out are judged against the verdicts
// written down before gpulens ran on them (tests/fixtures/nogpm/expected.json,
// the reasoning in EXPECTED.md): kernel-active time is work, never start-up,
// tear-down or "no GPU work"; the headline says what was not measured; the
// funnel stops at kernel-active; the cost splits into working and idle.
#include "verdict/verdict.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/trace_reader.hpp"
#include "without_gpm.hpp"

namespace gpulens::verdict {
namespace {

namespace fs = std::filesystem;

const nlohmann::json& expected() {
  static const nlohmann::json j = [] {
    std::ifstream in(fs::path(GPULENS_SOURCE_DIR) / "tests/fixtures/nogpm/expected.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

// Every recording, or only those that had GPM and lost it here (stripped): the
// others were recorded without it (`gpulens run --no-gpm` on an H200).
std::vector<std::string> recordings(bool stripped_only = false) {
  std::vector<std::string> out;
  for (const auto& r : expected()["recordings"]) {
    if (stripped_only && r.value("recorded_without_gpm", false)) continue;
    out.push_back(r["path"].get<std::string>());
  }
  return out;
}

const nlohmann::json& case_of(const std::string& path) {
  for (const auto& r : expected()["recordings"]) {
    if (r["path"] == path) return r;
  }
  throw std::runtime_error("no case for " + path);
}

void expect_in(double value, const nlohmann::json& range, const std::string& what) {
  const double lo = range[0].get<double>();
  const double hi = range[1].get<double>();
  EXPECT_TRUE(value >= lo - 1e-9 && value <= hi + 1e-9)
      << what << " = " << value << ", expected in [" << lo << ", " << hi << "]";
}

Verdict judge_file(const fs::path& file) {
  const auto trace = read_trace(file.string(), TraceReadOptions{.lenient = true});
  if (!trace) throw std::runtime_error("cannot read " + file.string());
  VerdictOptions o;
  o.price_per_gpu_hour = 2.0;  // so that the cost split is computed
  return build_verdict(*trace, o);
}

class NoGpmVerdict : public ::testing::TestWithParam<std::string> {
 protected:
  // Each recording is judged once (the 4-GPU one takes seconds in a debug build).
  static const Verdict& judge(const std::string& path) {
    static std::map<std::string, Verdict> cache;
    auto it = cache.find(path);
    if (it == cache.end()) {
      const fs::path stripped = testing::without_gpm(fs::path(GPULENS_SOURCE_DIR) / path);
      it = cache.emplace(path, judge_file(stripped)).first;
    }
    return it->second;
  }
};

TEST_P(NoGpmVerdict, HeadlineSaysWhatWasNotMeasured) {
  const Verdict& v = judge(GetParam());
  ASSERT_FALSE(v.headline.empty());
  // Nothing outranks the steady state here: no hang can be judged without the
  // pipes, and none of these jobs died.
  EXPECT_EQ(v.headline.front().kind, "steady_state") << v.headline.front().text;
  const std::string& text = v.headline.front().text;
  const auto& c = case_of(GetParam());
  for (const auto& word :
       c.contains("headline_must") ? c["headline_must"] : expected()["headline_must"]) {
    EXPECT_NE(text.find(word.get<std::string>()), std::string::npos)
        << GetParam() << ": no \"" << word.get<std::string>() << "\" in: " << text;
  }
  for (const auto& h : v.headline) {
    for (const auto& word : expected()["headline_must_not"]) {
      EXPECT_EQ(h.text.find(word.get<std::string>()), std::string::npos)
          << GetParam() << ": \"" << word.get<std::string>() << "\" in: " << h.text;
    }
  }
}

TEST_P(NoGpmVerdict, StartUpAndTearDownAreTheIdleSpansOnly) {
  const Verdict& v = judge(GetParam());
  const auto& c = case_of(GetParam());
  expect_in(v.startup_share, c["startup"], GetParam() + ": start-up share");
  expect_in(v.teardown_share, c["teardown"], GetParam() + ": tear-down share");
  // The rule itself: no second with kernels resident most of the time lies in a
  // GPU's start-up or tear-down.
  for (const auto& run : v.diagnosis.timeline) {
    if (run.state != diagnosis::GpuState::Busy) continue;
    EXPECT_FALSE(v.steady.in_edges(run.gpu, run.start, run.end))
        << GetParam() << ": GPU " << run.gpu << " busy from " << run.start << " to " << run.end
        << " counted as start-up or tear-down";
  }
}

TEST_P(NoGpmVerdict, StatesAreWhatTheClassicCountersTell) {
  const Verdict& v = judge(GetParam());
  const auto& c = case_of(GetParam());
  const double steady = 1.0 - v.edges_share;
  ASSERT_GT(steady, 0) << GetParam();
  ASSERT_FALSE(v.states.empty()) << GetParam();
  EXPECT_EQ(diagnosis::state_id(v.states.front().state), c["main"].get<std::string>())
      << GetParam();
  for (const auto& [id, range] : c["states"].items()) {
    double share = 0;
    for (const auto& s : v.states) {
      if (diagnosis::state_id(s.state) == id) share = s.share / steady;
    }
    expect_in(share, range, GetParam() + ": " + id + " share of the steady state");
  }
  for (const auto& s : v.states) {
    for (const auto& never : expected()["states_never"]) {
      EXPECT_NE(diagnosis::state_id(s.state), never.get<std::string>())
          << GetParam() << ": a state that needs GPM, " << never.get<std::string>();
    }
  }
}

TEST_P(NoGpmVerdict, FunnelStopsAtKernelActiveAndCostSplitsIntoWorkingAndIdle) {
  const Verdict& v = judge(GetParam());
  ASSERT_NE(v.funnel.step("kernel_active"), nullptr);
  EXPECT_TRUE(v.funnel.step("kernel_active")->share);
  EXPECT_FALSE(v.funnel.step("sm_active")->share);
  EXPECT_FALSE(v.funnel.step("tensor_active")->share);
  const Cost& cost = v.cost;
  ASSERT_TRUE(cost.total && cost.working_unmeasured && cost.idle && cost.edges) << GetParam();
  // Neither side of the SM split is claimed: it was not measured.
  EXPECT_FALSE(cost.useful);
  EXPECT_FALSE(cost.inefficiency);
  EXPECT_NEAR(*cost.edges + *cost.idle + *cost.working_unmeasured, *cost.total, 1e-9);
  EXPECT_NEAR(*cost.waste, *cost.idle, 1e-12) << "waste counts only what was measured: idle";
  EXPECT_GT(*cost.working_unmeasured, 0);
}

// Start-up and tear-down are idle seconds, and idle is judged from utilization
// alone: without GPM they are the seconds the verdict with GPM gives, but for the
// window in which a state settles (one diagnosis window, 5 s, per GPU and edge).
// Only the recordings that had GPM can be compared so.
class NoGpmAgainstGpm : public NoGpmVerdict {};

TEST_P(NoGpmAgainstGpm, EdgesAreTheSameSecondsAsWithGpm) {
  const Verdict& without = judge(GetParam());
  const Verdict with = judge_file(fs::path(GPULENS_SOURCE_DIR) / GetParam());
  ASSERT_TRUE(with.funnel.step("sm_active")->share) << "the original has GPM";
  const double window_s = with.diagnosis.window_s;
  ASSERT_EQ(with.steady.gpus.size(), without.steady.gpus.size());
  for (std::size_t i = 0; i < with.steady.gpus.size(); ++i) {
    const GpuSpan& a = with.steady.gpus[i];
    const GpuSpan& b = without.steady.gpus[i];
    EXPECT_NEAR(b.startup_s, a.startup_s, window_s) << GetParam() << ": GPU " << a.gpu;
    EXPECT_NEAR(b.teardown_s, a.teardown_s, window_s) << GetParam() << ": GPU " << a.gpu;
  }
}

// "multi_gpu_h200x4_main_multi", "traces_training_h100": the folder keeps the
// multi_gpu recordings (all multi.trace.jsonl) apart.
std::string case_name(const ::testing::TestParamInfo<std::string>& param) {
  const fs::path p(param.param);
  std::string name;
  for (char ch : p.parent_path().filename().string() + "_" + p.stem().stem().string()) {
    name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(RecordedOnHopper, NoGpmVerdict, ::testing::ValuesIn(recordings()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(RecordedOnHopper, NoGpmAgainstGpm,
                         ::testing::ValuesIn(recordings(/*stripped_only=*/true)), case_name);

}  // namespace
}  // namespace gpulens::verdict

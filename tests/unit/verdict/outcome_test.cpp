// SPDX-License-Identifier: Apache-2.0
// The labelled corpus's job ends (calibration/corpus/expected.json `job_end`,
// written before the recordings): how each recorded job ended, whether it died
// out of memory, and the words its headline must and must not say. The same
// checks as calibration/corpus/score.py makes on `gpulens report --format json`,
// on the recordings in tests/fixtures/corpus/, as part of the suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/trace_reader.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::verdict {
namespace {

const std::string kJobEndCorpus = std::string(GPULENS_FIXTURES) + "/corpus/";
const std::string kJobEndLabels =
    std::string(GPULENS_SOURCE_DIR) + "/calibration/corpus/expected.json";

struct JobEndLabel {
  std::string workload;
  nlohmann::json end;
};

std::vector<JobEndLabel> labelled_job_ends() {
  std::ifstream in(kJobEndLabels);
  const auto doc = nlohmann::json::parse(in);
  std::vector<JobEndLabel> out;
  for (const auto& w : doc.at("workloads")) {
    if (!w.contains("job_end")) continue;
    const auto name = w.at("workload").get<std::string>();
    if (!std::filesystem::exists(kJobEndCorpus + name + ".trace.jsonl")) continue;
    out.push_back({name, w.at("job_end")});
  }
  return out;
}

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

void PrintTo(const JobEndLabel& l, std::ostream* os) {
  *os << l.workload;
}

class CorpusJobEndTest : public ::testing::TestWithParam<JobEndLabel> {};

TEST_P(CorpusJobEndTest, TheJobsEndReadsAsLabelled) {
  const JobEndLabel& label = GetParam();
  auto trace = read_trace(kJobEndCorpus + label.workload + ".trace.jsonl",
                          TraceReadOptions{.lenient = true});
  ASSERT_TRUE(trace) << trace.error().message;
  const Verdict v = build_verdict(*trace, VerdictOptions{});
  ASSERT_TRUE(v.job.present);
  if (label.end.contains("exit_code")) {
    EXPECT_EQ(v.job.exit_code, label.end.at("exit_code").get<int>());
  }
  if (label.end.value("oom", false)) {
    EXPECT_TRUE(v.outcome.out_of_memory);
  }
  ASSERT_FALSE(v.headline.empty());
  const std::string headline = lowered(v.headline.front().text);
  const auto words = label.end.value("headline", std::vector<std::string>{});
  if (!words.empty()) {
    EXPECT_TRUE(std::any_of(words.begin(), words.end(), [&](const std::string& w) {
      return headline.find(lowered(w)) != std::string::npos;
    })) << v.headline.front().text;
  }
  for (const auto& w : label.end.value("headline_not", std::vector<std::string>{})) {
    EXPECT_EQ(headline.find(lowered(w)), std::string::npos) << v.headline.front().text;
  }
}

std::string job_end_name(const ::testing::TestParamInfo<JobEndLabel>& info) {
  std::string name = info.param.workload;
  for (auto& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(CorpusJobEnd, CorpusJobEndTest, ::testing::ValuesIn(labelled_job_ends()),
                         job_end_name);

TEST(CorpusJobEnd, EveryLabelledOutOfMemoryDeathIsRecorded) {
  // leak_oom (H100, counters only) and leak_fast (H200, with the job's own
  // words): without them the checks above would pass on nothing.
  std::vector<std::string> names;
  for (const auto& l : labelled_job_ends()) names.push_back(l.workload);
  EXPECT_NE(std::find(names.begin(), names.end(), "leak_oom"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "leak_fast"), names.end());
}

}  // namespace
}  // namespace gpulens::verdict

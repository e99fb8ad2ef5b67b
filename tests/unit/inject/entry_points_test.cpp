// SPDX-License-Identifier: Apache-2.0
// The injection library's entry points (src/inject/entry_points.cpp), loaded into
// the stand-in CUDA process of tests/fakes as the driver loads it, over the
// stand-in libcupti: the job's own profiler taking over before or after CUDA
// starts, a forked worker, and a process nobody asked to record. Traced whole, so
// no window waits on the clock. `gpulens run` around it: run_kernels_test.cpp.
#ifdef GPULENS_INJECTION_SEAMS
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "inject_env.hpp"

namespace gpulens::inject {
namespace {

// Runs the stand-in job with the library as CUDA_INJECTION64_PATH, records into
// `dir` unless `record` is false, with `env` (VAR=value ...) before it. Returns
// the record lines of every process (each file's).
std::vector<nlohmann::json> run_entry_job(const std::filesystem::path& dir, const std::string& env,
                                          bool record = true) {
  const std::string cmd = "env GPULENS_CUPTI='" + std::string(GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY) +
                          "' CUDA_INJECTION64_PATH='" + GPULENS_INJECTION_LIB + "' " +
                          (record ? "GPULENS_KERNELS_DIR='" + dir.string() + "' " : "") + env +
                          " '" + GPULENS_KERNELS_FAKE_JOB + "' 0 > '" + (dir / "out.txt").string() +
                          "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<nlohmann::json> lines;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".jsonl") continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

const nlohmann::json* entry_end_line(const std::vector<nlohmann::json>& lines) {
  for (const auto& l : lines) {
    if (l.value("record", "") == "end") return &l;
  }
  return nullptr;
}

TEST(EntryPoints, TracedWholeAJobRecordsFromCudasStartToItsExit) {
  const auto dir = testing::fresh_dir("entry-whole");
  const auto lines = run_entry_job(dir, "");
  const auto* end = entry_end_line(lines);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ((*end)["status"], "ok");
  EXPECT_EQ((*end)["chunks"], 1);  // the last chunk, at exit
  EXPECT_EQ(lines.front()["record"], "process");
  EXPECT_FALSE(lines.front().contains("sampling"));  // traced whole
  std::filesystem::remove_all(dir);
}

TEST(EntryPoints, TheJobsOwnProfilerAfterCudaStartedTakesOverAndItIsSaid) {
  const auto dir = testing::fresh_dir("entry-after");
  const auto lines = run_entry_job(dir, "FAKE_JOB_OWN_PROFILER=after");
  const auto* end = entry_end_line(lines);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ((*end)["status"], "job_profiler");
  EXPECT_EQ((*end)["reason"], "the job started its own CUPTI profiler (e.g. torch.profiler)");
  EXPECT_TRUE(end->contains("yielded_ns"));
  std::filesystem::remove_all(dir);
}

// kineto's source sets CUPTI's per-thread-buffer attribute before registering its buffers,
// and CUPTI calls a change of it with kinds on undefined: every kind of ours is off
// before the job's first attribute reaches libcupti, not only before its
// registration.
TEST(EntryPoints, TheJobsFirstAttributeFindsOurKindsOff) {
  const auto dir = testing::fresh_dir("entry-attribute");
  const std::string log = (dir / "cupti.log").string();
  const auto lines = run_entry_job(dir, "FAKE_JOB_OWN_PROFILER=after FAKE_CUPTI_LOG='" + log + "'");
  const auto* end = entry_end_line(lines);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ((*end)["status"], "job_profiler");
  const auto calls = testing::fake_cupti_calls(log);
  const auto attribute = std::find(calls.begin(), calls.end(), "attribute 9");
  ASSERT_NE(attribute, calls.end());
  // Each kind we enabled before it was disabled again before it.
  std::map<std::string, int> on;
  for (auto c = calls.begin(); c != attribute; ++c) {
    const auto space = c->find(' ');
    const std::string what = c->substr(0, space), kind = c->substr(space + 1);
    if (what == "enable") ++on[kind];
    if (what == "disable") on[kind] = 0;
  }
  for (const auto& [kind, n] : on) EXPECT_EQ(n, 0) << "kind " << kind << " still on";
  EXPECT_FALSE(on.empty());  // we had attached and traced
  // The job's registration comes after, and nothing of ours is enabled again.
  EXPECT_NE(std::find(attribute, calls.end(), "register 0"), calls.end());
  EXPECT_EQ(std::count_if(attribute, calls.end(),
                          [](const std::string& c) { return c.rfind("enable ", 0) == 0; }),
            0);
  std::filesystem::remove_all(dir);
}

TEST(EntryPoints, TheJobsOwnProfilerBeforeCudaStartedLeavesItAlone) {
  const auto dir = testing::fresh_dir("entry-before");
  const std::string log = (dir / "cupti.log").string();
  const auto lines =
      run_entry_job(dir, "FAKE_JOB_OWN_PROFILER=before FAKE_CUPTI_LOG='" + log + "'");
  const auto* end = entry_end_line(lines);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ((*end)["status"], "job_profiler");
  EXPECT_EQ((*end)["reason"],
            "the job registered its own CUPTI activity buffers before CUDA started");
  EXPECT_EQ((*end)["chunks"], 0);
  EXPECT_FALSE(end->contains("yielded_ns"));
  EXPECT_TRUE(testing::fake_cupti_calls(log).empty());  // CUPTI never touched by us
  std::filesystem::remove_all(dir);
}

TEST(EntryPoints, AForkedWorkerWritesNoRecordOfItsOwn) {
  const auto dir = testing::fresh_dir("entry-fork");
  const auto lines = run_entry_job(dir, "FAKE_JOB_FORK=1");
  std::size_t files = 0, ends = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    files += e.path().extension() == ".jsonl";
  for (const auto& l : lines) ends += l.value("record", "") == "end";
  EXPECT_EQ(files, 1u);
  EXPECT_EQ(ends, 1u);
  std::filesystem::remove_all(dir);
}

TEST(EntryPoints, AProcessNobodyAskedToRecordIsLeftAlone) {
  const auto dir = testing::fresh_dir("entry-none");
  const std::string log = (dir / "cupti.log").string();
  const auto lines = run_entry_job(dir, "FAKE_CUPTI_LOG='" + log + "'", false);
  EXPECT_TRUE(lines.empty());
  EXPECT_TRUE(testing::fake_cupti_calls(log).empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpulens::inject
#endif

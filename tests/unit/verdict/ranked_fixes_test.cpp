// SPDX-License-Identifier: Apache-2.0
// The ranked fixes of a job whose low SM activity is a collective's, never "more
// blocks": under a hang (a low-SM alert that fired before the stall was
// confirmed), and where the kernel view shows collectives holding most kernel
// time (verdict::CollectiveEvidence), which bring the communication fix instead.
#include "verdict/ranked_fixes.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/trace_reader.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::verdict {
namespace {

constexpr const char* kMoreBlocks =
    "About 24 of 132 SMs busy: launch more blocks per kernel (at least one per SM, ideally "
    "several waves) or use a larger batch.";
constexpr const char* kMps =
    "If the work cannot grow, run several streams or processes side by side (MPS), or right-size "
    "the GPU (a MIG slice or a smaller GPU).";
constexpr const char* kCommunication =
    "overlap communication with compute (DDP's gradient buckets, bucket_cap_mb, ...)";

diagnosis::DiagnosisReport sm_underused_job(int gpus) {
  diagnosis::DiagnosisReport r;
  for (int g = 0; g < gpus; ++g) {
    diagnosis::TimelineRun run;
    run.gpu = g;
    run.start = 0;
    run.end = 100;
    run.state = diagnosis::GpuState::SmUnderused;
    run.fixes = {kMoreBlocks, kMps};
    r.timeline.push_back(run);
  }
  return r;
}

bool fills_sms(const std::string& fix) {
  return fix.find("more blocks") != std::string::npos || fix.find("MPS") != std::string::npos;
}

TEST(VerdictRankedFixes, MostlyCollectivesReplaceTheSmFillingFixes) {
  const auto r = sm_underused_job(4);
  const CollectiveEvidence evidence{0.8, kCommunication};
  FixInputs in;
  in.job_gpus = 4;
  in.collectives = &evidence;
  const auto fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].text, fmt::format("GPUs 0, 1, 2 and 3: {}", kCommunication));
  EXPECT_EQ(fixes[0].about, "kernels:communication");
  for (const auto& f : fixes) EXPECT_FALSE(fills_sms(f.text)) << f.text;
}

TEST(VerdictRankedFixes, AMinorityOfCollectivesLeavesTheStateFixes) {
  const auto r = sm_underused_job(1);
  const CollectiveEvidence evidence{0.3, kCommunication};
  FixInputs in;
  in.collectives = &evidence;
  auto fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_EQ(fixes[0].text, kMoreBlocks);
  EXPECT_EQ(fixes[0].about, "state:sm_underused");
  in.collectives = nullptr;  // no kernel view: the state's fixes, as before
  fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_EQ(fixes[0].text, kMoreBlocks);
}

TEST(VerdictRankedFixes, LaunchBoundWithCollectivesGetsTheCommunicationFixToo) {
  diagnosis::DiagnosisReport r;
  diagnosis::TimelineRun run;
  run.end = 50;
  run.state = diagnosis::GpuState::LaunchBound;
  run.fixes = {"Give each launch more work: larger batches, fewer and bigger kernels."};
  r.timeline.push_back(run);
  diagnosis::TimelineRun busy = run;
  busy.start = 50;
  busy.end = 100;
  busy.state = diagnosis::GpuState::ComputeBound;
  busy.fixes = {"Fuse kernels (torch.compile)."};
  r.timeline.push_back(busy);
  const CollectiveEvidence evidence{0.6, kCommunication};
  FixInputs in;
  in.collectives = &evidence;
  const auto fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_EQ(fixes[0].text, kCommunication);
  EXPECT_EQ(fixes[1].text, "Fuse kernels (torch.compile).");  // other states keep theirs
}

diagnosis::AlertRecord alert(const std::string& rule, int gpu, double since, double resolved,
                             std::vector<std::string> fixes) {
  diagnosis::AlertRecord a;
  a.rule = rule;
  a.gpu = gpu;
  a.severity = rule == "stalled" ? diagnosis::Severity::Critical : diagnosis::Severity::Warning;
  a.since = since;
  a.fired_at = since + 30;
  a.resolved_at = resolved;
  a.fixes = std::move(fixes);
  return a;
}

TEST(VerdictRankedFixes, ALowSmAlertUnderAHangGivesNoSmFillingFix) {
  // As on 4 H100s whose all-gather hung: low_efficiency fired (at 103 s) on the
  // spinning collective before stalled did (at 134 s), with the state's fixes.
  diagnosis::DiagnosisReport r;
  r.alerts.push_back(alert("low_efficiency", 0, 73, 163, {kMoreBlocks, kMps}));
  r.alerts.push_back(alert("stalled", 0, 74, 163, {"Confirm the hang."}));
  // On GPU 1, no hang: its alert keeps its fixes.
  r.alerts.push_back(alert("high_util_low_activity", 1, 10, 60, {kMoreBlocks}));
  FixInputs in;
  in.end = 163;
  in.job_gpus = 2;
  const auto fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_EQ(fixes[0].text, "GPU 0: Confirm the hang.");
  EXPECT_EQ(fixes[1].text, fmt::format("GPU 1: {}", kMoreBlocks));
  EXPECT_EQ(fixes[1].about, "alert:high_util_low_activity");
}

TEST(VerdictRankedFixes, MostlyCollectivesTurnLowSmAlertsIntoTheCommunicationFix) {
  diagnosis::DiagnosisReport r;
  r.alerts.push_back(alert("low_efficiency", 0, 10, 60, {kMoreBlocks, kMps}));
  r.alerts.push_back(alert("memory_growth", 0, 10, 60, {"Find what each step keeps."}));
  const CollectiveEvidence evidence{0.7, kCommunication};
  FixInputs in;
  in.end = 60;
  in.collectives = &evidence;
  const auto fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 2u);
  for (const auto& f : fixes) EXPECT_FALSE(fills_sms(f.text)) << f.text;
  EXPECT_EQ(fixes[0].about, "kernels:communication");
  EXPECT_EQ(fixes[1].text, "Find what each step keeps.");  // not a low-SM alert: kept
}

// The recording of a DDP job with a slow rank then a hung all-gather on 4 H100s
// (h200x4-main, the same plan on H200s, reads the same; one is enough for the
// time a debug build takes): no ranked fix fills SMs, and the hang's leads.
TEST(VerdictRankedFixes, TheRecordedHungCollectivesGetNoSmFillingFix) {
  for (const char* run : {"h100x4-advice"}) {
    const std::string path =
        fmt::format("{}/multi_gpu/{}/multi.trace.jsonl", GPULENS_FIXTURES, run);
    const auto trace = read_trace(path, TraceReadOptions{.lenient = true});
    ASSERT_TRUE(trace) << path;
    const Verdict v = build_verdict(*trace, VerdictOptions{});
    ASSERT_FALSE(v.ranked_fixes.empty()) << run;
    EXPECT_EQ(v.ranked_fixes[0].about, "alert:stalled") << run;
    for (const auto& f : v.ranked_fixes) {
      EXPECT_EQ(f.text.find("more blocks"), std::string::npos) << run << ": " << f.text;
    }
  }
}

// A launch-bound GPU's first fix ends naming the kernels the launch counts say are
// launched most (at least 5 % each, three at most) and the GPU's launch rate; other
// states' fixes are left as they are, and so are the later fixes.
TEST(VerdictRankedFixes, LaunchCountsNameTheKernelsOfALaunchBoundFix) {
  diagnosis::DiagnosisReport r;
  diagnosis::TimelineRun launch;
  launch.gpu = 0;
  launch.start = 0;
  launch.end = 100;
  launch.state = diagnosis::GpuState::LaunchBound;
  launch.fixes = {"Launch fewer, bigger kernels.", "Fuse element-wise operations."};
  r.timeline.push_back(launch);
  diagnosis::TimelineRun sm = launch;
  sm.gpu = 1;
  sm.end = 20;
  sm.state = diagnosis::GpuState::SmUnderused;
  sm.fixes = {kMoreBlocks};
  r.timeline.push_back(sm);
  LaunchEvidence e;
  e.top = {{"vectorized_elementwise_kernel", 0.61},
           {"reduce_kernel", 0.12},
           {"softmax", 0.08},
           {"gemm", 0.06},
           {"copy", 0.04}};
  e.per_second = {{0, 41234.4}, {1, 900}};
  FixInputs in;
  in.job_gpus = 2;
  in.launches = &e;
  const auto fixes = rank_fixes(r, in);
  ASSERT_GE(fixes.size(), 3u);
  EXPECT_EQ(fixes[0].text,
            "GPU 0: Launch fewer, bigger kernels. The launch counts say which kernels to fold "
            "first: `vectorized_elementwise_kernel` (61 % of launches), `reduce_kernel` (12 % of "
            "launches), `softmax` (8 % of launches); GPU 0 was fed 41234 launches a second.");
  for (std::size_t i = 1; i < fixes.size(); ++i) {
    EXPECT_EQ(fixes[i].text.find("launch counts"), std::string::npos) << fixes[i].text;
  }
  // Without the counts, or with none of their kernels at 5 %, the fix is as it was.
  in.launches = nullptr;
  EXPECT_EQ(rank_fixes(r, in)[0].text, "GPU 0: Launch fewer, bigger kernels.");
  LaunchEvidence spread;
  spread.top = {{"a", 0.04}, {"b", 0.03}};
  in.launches = &spread;
  EXPECT_EQ(rank_fixes(r, in)[0].text, "GPU 0: Launch fewer, bigger kernels.");
  EXPECT_EQ(launch_evidence_text(spread, {0}), "");
}

}  // namespace
}  // namespace gpulens::verdict

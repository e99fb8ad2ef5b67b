// SPDX-License-Identifier: Apache-2.0
// The verdict's headline and fixes follow one order: the job's death (out of
// memory when its memory stood at the ceiling), a hang, critical alerts, the
// steady state with any imbalance, then start-up and tear-down. Synthetic
// recordings and hand-made diagnoses, so that each rule is tested alone.
#include "verdict/headline.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "render/verdict_output.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::verdict {
namespace {

constexpr double kTotalMib = 81559;  // an H100 80GB

// A recording of one 80 GB GPU, sampled every second, with no samples yet.
Trace one_gpu_trace(const std::string& model) {
  Trace t;
  t.header.interval_s = 1.0;
  DeviceInfo d;
  d.index = 0;
  d.name = model;
  d.mem_total_mib = kTotalMib;
  t.header.devices.push_back(d);
  return t;
}

StderrScan stderr_scanned(std::string state) {
  StderrScan s;
  s.state = std::move(state);
  return s;
}

// `scan`: what `gpulens run` read on the job's stderr (by default: read, nothing said).
Trace job_trace(int seconds, double last_mem_mib, std::optional<int> exit_code,
                std::optional<int> signal, StderrScan scan = stderr_scanned("read")) {
  Trace t = one_gpu_trace("NVIDIA H100 80GB HBM3");
  const double t0 = 1000;
  t.marks.push_back(job_start_mark(t0, "python3 leak.py", 42));
  for (int i = 1; i <= seconds; ++i) {
    Sample s;
    s.t = t0 + i;
    s.values.set(Metric::GpuUtil, 40.0);
    s.values.set(Metric::SmActive, 35.0);
    s.values.set(Metric::TensorActive, 30.0);
    // Memory grows in a straight line to `last_mem_mib`.
    s.values.set(Metric::MemUsedMib, 2000 + (last_mem_mib - 2000) * i / seconds);
    s.values.set(Metric::PowerW, 300.0);
    t.samples.push_back(s);
  }
  JobRecord job;
  job.present = true;
  job.command = "python3 leak.py";
  job.pid = 42;
  job.exit_code = exit_code;
  job.signal = signal;
  job.gpus = {0};
  job.gpus_basis = "processes";
  job.start = t0;
  job.end = t0 + seconds + 0.5;
  job.stderr_scan = std::move(scan);
  t.marks.push_back(job_end_mark(*job.end, job));
  return t;
}

TEST(VerdictOutcome, AJobThatExitsOneWithMemoryAtTheCeilingDiedOutOfMemory) {
  const auto t = job_trace(113, kTotalMib - 450, 1, std::nullopt);
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_EQ(v.outcome.end, JobEnd::Failed);
  EXPECT_TRUE(v.outcome.out_of_memory);
  EXPECT_EQ(v.outcome.gpu, 0);
  ASSERT_FALSE(v.headline.empty());
  EXPECT_EQ(v.headline.front().kind, "out_of_memory");
  EXPECT_NE(v.headline.front().text.find("died out of memory after 1m 54s"), std::string::npos)
      << v.headline.front().text;
  EXPECT_NE(v.headline.front().text.find("79.2 of 79.6 GiB"), std::string::npos)
      << v.headline.front().text;
  // Its first fix is about the memory, before anything the states ask for.
  ASSERT_FALSE(v.ranked_fixes.empty());
  EXPECT_EQ(v.ranked_fixes.front().tier, FixTier::OutOfMemory);
  // The JSON the corpus scorer reads.
  const auto j = render::verdict_to_json(v);
  EXPECT_EQ(j["job"]["exit_code"], 1);
  EXPECT_EQ(j["job"]["outcome"]["out_of_memory"], true);
  EXPECT_EQ(j["job"]["outcome"]["end"], "failed");
  EXPECT_NE(j["headline"].get<std::string>().find("out of memory"), std::string::npos);
}

TEST(VerdictOutcome, MemoryBelowTheCeilingIsAFailureButNotOutOfMemory) {
  const auto t = job_trace(60, 40000, 1, std::nullopt);
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_EQ(v.outcome.end, JobEnd::Failed);
  EXPECT_FALSE(v.outcome.out_of_memory);
  ASSERT_FALSE(v.headline.empty());
  EXPECT_EQ(v.headline.front().kind, "died");
  EXPECT_NE(v.headline.front().text.find("failed with exit code 1"), std::string::npos);
  EXPECT_NE(v.headline.front().text.find("not out of memory"), std::string::npos);
}

StderrScan pytorch_oom() {
  StderrScan s;
  s.state = "read";
  s.oom_source = "pytorch";
  s.oom_message =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total "
      "capacity of 79.10 GiB of which 3.19 GiB is free. Including non-PyTorch memory, this "
      "process has 75.90 GiB memory in use. Of the allocated memory 70.21 GiB is allocated by "
      "PyTorch, and 2.35 GiB is reserved by PyTorch but unallocated. If reserved but "
      "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";
  s.oom_tried_mib = 4096;
  s.oom_free_mib = 3266.56;
  return s;
}

// The case of issue 46: a 4 GiB request failed with 3.2 GiB free, memory short
// of the ceiling by more than the counters' margin. The job's words settle it.
TEST(VerdictOutcome, TheJobSayingOutOfMemoryIsOutOfMemoryShortOfTheCeiling) {
  const auto t = job_trace(60, kTotalMib - 3500, 1, std::nullopt, pytorch_oom());
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_TRUE(v.outcome.out_of_memory);
  EXPECT_FALSE(v.outcome.memory_at_ceiling);
  EXPECT_EQ(v.outcome.out_of_memory_basis(), "stderr");
  ASSERT_FALSE(v.headline.empty());
  const std::string& text = v.headline.front().text;
  EXPECT_EQ(v.headline.front().kind, "out_of_memory");
  EXPECT_NE(text.find("(exit code 1): it said “torch.OutOfMemoryError: CUDA out of memory. "
                      "Tried to allocate 4.00 GiB."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(4.0 GiB asked for, 3.2 GiB free)"), std::string::npos) << text;
  EXPECT_NE(text.find("stood at 76.2 of 79.6 GiB"), std::string::npos) << text;
  EXPECT_EQ(text.find("expandable_segments"), std::string::npos) << "quoted in full: " << text;
  EXPECT_EQ(text.find("not out of memory"), std::string::npos) << text;
  ASSERT_FALSE(v.ranked_fixes.empty());
  EXPECT_EQ(v.ranked_fixes.front().tier, FixTier::OutOfMemory);
  const auto j = render::verdict_to_json(v);
  const auto& out = j["job"]["outcome"];
  EXPECT_EQ(out["out_of_memory"], true);
  EXPECT_EQ(out["memory_at_ceiling"], false);
  EXPECT_EQ(out["out_of_memory_basis"], "stderr");
  EXPECT_EQ(out["stderr"]["scan"], "read");
  EXPECT_EQ(out["stderr"]["oom_source"], "pytorch");
  EXPECT_EQ(out["stderr"]["oom_tried_mib"], 4096);
  EXPECT_NE(out["stderr"]["oom_message"].get<std::string>().find("expandable_segments"),
            std::string::npos);
}

TEST(VerdictOutcome, BothWitnessesAgreeingSayStderrAndCounters) {
  const auto t = job_trace(60, kTotalMib - 100, 1, std::nullopt, pytorch_oom());
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_EQ(v.outcome.out_of_memory_basis(), "stderr_and_counters");
  EXPECT_NE(v.headline.front().text.find("it said “torch.OutOfMemoryError"), std::string::npos);
}

TEST(VerdictOutcome, AtTheCeilingWithoutAMessageItKnowsRestsOnTheCounters) {
  // A message in words gpulens does not know: the counters alone, and said so.
  const auto t = job_trace(60, kTotalMib - 100, 1, std::nullopt);
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_TRUE(v.outcome.out_of_memory);
  EXPECT_EQ(v.outcome.out_of_memory_basis(), "counters");
  EXPECT_NE(v.headline.front().text.find("rests on the counters alone: its stderr held no "
                                         "out-of-memory message in a form gpulens knows"),
            std::string::npos)
      << v.headline.front().text;
}

TEST(VerdictOutcome, NotOutOfMemoryOnlyWhenTheStderrWasReadToo) {
  for (const std::string state : {"", "off", "not_captured", "incomplete"}) {
    const auto t = job_trace(60, 40000, 1, std::nullopt, stderr_scanned(state));
    const Verdict v = build_verdict(t, VerdictOptions{});
    EXPECT_FALSE(v.outcome.out_of_memory) << state;
    const std::string& text = v.headline.front().text;
    EXPECT_EQ(v.headline.front().kind, "died") << state;
    EXPECT_EQ(text.find("not out of memory"), std::string::npos) << text;
    EXPECT_NE(text.find("short of the ceiling; this rests on the counters alone: on its stderr, "),
              std::string::npos)
        << text;
  }
  const auto off =
      build_verdict(job_trace(60, 40000, 1, std::nullopt, stderr_scanned("off")), VerdictOptions{});
  EXPECT_NE(off.headline.front().text.find("(--no-stderr-scan)"), std::string::npos);
  // Unread and at the ceiling: out of memory by the counters, and it says why alone.
  const auto unread = build_verdict(job_trace(60, kTotalMib - 100, 1, std::nullopt, StderrScan{}),
                                    VerdictOptions{});
  EXPECT_TRUE(unread.outcome.out_of_memory);
  EXPECT_NE(unread.headline.front().text.find(
                "rests on the counters alone: on its stderr, the recording does not say"),
            std::string::npos)
      << unread.headline.front().text;
}

TEST(VerdictOutcome, AJobThatCaughtItsOutOfMemoryAndExitedCleanlyDidNotDie) {
  const auto t = job_trace(60, 40000, 0, std::nullopt, pytorch_oom());
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_FALSE(v.outcome.died());
  EXPECT_FALSE(v.outcome.out_of_memory);
}

TEST(VerdictOutcome, TheJobsWordsSurviveTheRecordingAndAreMadeSafeOnTheWayIn) {
  StderrScan s = pytorch_oom();
  s.oom_message = "CUDA error: out of memory\x1b]0;x\x07" + std::string(2000, 'y');
  s.oom_free_mib = -1;
  const auto t = job_trace(60, 40000, 1, std::nullopt, s);
  const JobRecord job = job_from_marks(t.marks);
  EXPECT_EQ(job.stderr_scan.state, "read");
  EXPECT_EQ(job.stderr_scan.oom_source, "pytorch");
  EXPECT_EQ(job.stderr_scan.oom_message.find('\x1b'), std::string::npos);
  EXPECT_LE(job.stderr_scan.oom_message.size(), kOomMessageMax + 3);
  EXPECT_EQ(job.stderr_scan.oom_tried_mib, 4096);
  EXPECT_FALSE(job.stderr_scan.oom_free_mib);  // a negative size is no size
}

TEST(VerdictOutcome, ACleanExitAtTheCeilingIsNotADeath) {
  // Frameworks that reserve the whole device (JAX, TensorFlow) sit at the ceiling.
  const auto t = job_trace(60, kTotalMib - 10, 0, std::nullopt);
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_EQ(v.outcome.end, JobEnd::Exited);
  EXPECT_FALSE(v.outcome.out_of_memory);
  ASSERT_FALSE(v.headline.empty());
  EXPECT_EQ(v.headline.front().kind, "steady_state");
}

TEST(VerdictOutcome, AJobKilledByASignalIsHeadlinedAsSuch) {
  const auto t = job_trace(30, 20000, std::nullopt, SIGKILL);
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_EQ(v.outcome.end, JobEnd::Killed);
  ASSERT_FALSE(v.headline.empty());
  EXPECT_EQ(v.headline.front().kind, "died");
  EXPECT_NE(v.headline.front().text.find("killed by SIGKILL after 30.5 s"), std::string::npos)
      << v.headline.front().text;
  const auto j = render::verdict_to_json(v);
  EXPECT_EQ(j["job"]["outcome"]["signal_name"], "SIGKILL");
  EXPECT_EQ(j["job"]["outcome"]["died"], true);
}

TEST(VerdictOutcome, MemoryFreedWhileTheProcessUnwindsStillCounts) {
  // The last samples show memory released: the peak of the last seconds counts.
  auto t = job_trace(60, kTotalMib - 300, 1, std::nullopt);
  Sample freed = t.samples.back();
  freed.t += 1;
  freed.values.set(Metric::MemUsedMib, 500.0);
  t.samples.push_back(freed);
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_TRUE(v.outcome.out_of_memory);
}

TEST(VerdictOutcome, ARecordingWithoutJobMarksHasNoOutcome) {
  auto t = job_trace(20, kTotalMib, 1, std::nullopt);
  t.marks.clear();
  const Verdict v = build_verdict(t, VerdictOptions{});
  EXPECT_EQ(v.outcome.end, JobEnd::Unknown);
  EXPECT_FALSE(v.outcome.out_of_memory);
  EXPECT_TRUE(render::verdict_to_json(v)["job"].is_null());
}

// --- the order of the headline, on hand-made verdicts -----------------------

diagnosis::TimelineRun run(int gpu, double start, double end, diagnosis::GpuState state,
                           std::string fix) {
  diagnosis::TimelineRun r;
  r.gpu = gpu;
  r.start = start;
  r.end = end;
  r.state = state;
  r.fixes = {std::move(fix)};
  return r;
}

diagnosis::AlertRecord alert(std::string rule, diagnosis::Severity sev, double at,
                             std::string fix) {
  diagnosis::AlertRecord a;
  a.rule = std::move(rule);
  a.severity = sev;
  a.since = at;
  a.fired_at = at;
  a.message = "message of " + a.rule;
  a.fixes = {std::move(fix)};
  return a;
}

// Two GPUs over 100 s: 10 s start-up, work, 5 s tear-down; GPU 1 waits on GPU 0
// for 30 s; a memory-growth alert (critical) and a hang (stalled) on GPU 0.
Verdict two_gpu_verdict(bool with_hang, bool with_critical) {
  Verdict v;
  v.measured = true;
  v.start = 0;
  v.end = 100;
  v.duration_s = 100;
  DeviceInfo a, b;
  a.index = 0;
  b.index = 1;
  v.devices = {a, b};
  auto& tl = v.diagnosis.timeline;
  tl.push_back(run(0, 0, 10, diagnosis::GpuState::Idle, "Nothing runs: release it."));
  tl.push_back(run(0, 10, 95, diagnosis::GpuState::ComputeBound, "Fuse kernels."));
  tl.push_back(run(0, 95, 100, diagnosis::GpuState::Idle, "Nothing runs: release it."));
  tl.push_back(run(1, 0, 10, diagnosis::GpuState::Idle, "Nothing runs: release it."));
  tl.push_back(run(1, 10, 40, diagnosis::GpuState::WaitingOnPeer, "Balance the work."));
  tl.push_back(run(1, 40, 60, diagnosis::GpuState::Idle, "Nothing runs: release it."));
  tl.back().summary = "";
  tl.push_back(run(1, 60, 95, diagnosis::GpuState::ComputeBound, "Fuse kernels."));
  tl.push_back(run(1, 95, 100, diagnosis::GpuState::Idle, "Nothing runs: release it."));
  tl[4].summary = "A kernel is \"running\" while GPU 0 of the same job is busy (95 %).";
  if (with_critical) {
    v.diagnosis.alerts.push_back(
        alert("memory_growth", diagnosis::Severity::Critical, 30, "Find what each step keeps."));
  }
  if (with_hang) {
    v.diagnosis.alerts.push_back(
        alert("stalled", diagnosis::Severity::Warning, 50, "Confirm the hang."));
  }
  v.alerts = v.diagnosis.alerts;
  v.steady = find_steady_state(v.diagnosis);
  const double total = v.steady.total_s;
  v.startup_share = v.steady.startup_s / total;
  v.teardown_share = v.steady.teardown_s / total;
  v.edges_share = v.startup_share + v.teardown_share;
  for (const auto s : diagnosis::all_states()) {
    const double secs = v.steady.steady.seconds[diagnosis::state_index(s)];
    if (secs > 0) v.states.push_back({s, secs / total, 0});
  }
  std::stable_sort(v.states.begin(), v.states.end(),
                   [](const StateShare& x, const StateShare& y) { return x.share > y.share; });
  Imbalance im;
  im.gpu = 1;
  im.peer = 0;
  im.waiting_s = 30;
  im.share = 30.0 / 85;
  v.imbalance.push_back(im);
  return v;
}

std::vector<std::string> kinds(const std::vector<HeadlineItem>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.kind);
  return out;
}

TEST(VerdictHeadline, DeathThenHangThenCriticalThenSteadyStateThenEdges) {
  Verdict v = two_gpu_verdict(true, true);
  v.outcome.end = JobEnd::Killed;
  v.outcome.signal = SIGTERM;
  const auto items = build_headline(v);
  EXPECT_EQ(kinds(items),
            (std::vector<std::string>{"died", "hang", "critical_alert", "steady_state", "edges"}));
  EXPECT_NE(items[1].text.find("Hang from +50.0 s for 50.0 s: message of stalled"),
            std::string::npos)
      << items[1].text;
}

TEST(VerdictHeadline, AHangLeadsWhenTheJobDidNotDie) {
  const auto items = build_headline(two_gpu_verdict(true, true));
  ASSERT_GE(items.size(), 2u);
  EXPECT_EQ(items[0].kind, "hang");
  EXPECT_EQ(items[1].kind, "critical_alert");
}

TEST(VerdictHeadline, TheMemoryGrowthAlertFollowsAnOutOfMemoryDeath) {
  Verdict v = two_gpu_verdict(false, true);
  v.outcome.end = JobEnd::Failed;
  v.outcome.exit_code = 1;
  v.outcome.out_of_memory = true;
  v.outcome.gpu = 0;
  v.outcome.memory_peak_mib = 81000;
  v.outcome.memory_total_mib = kTotalMib;
  const auto items = build_headline(v);
  ASSERT_GE(items.size(), 3u);
  EXPECT_EQ(items[0].kind, "out_of_memory");
  EXPECT_NE(items[0].text.find("of GPU 0 reached 79.1 of 79.6 GiB"), std::string::npos)
      << items[0].text;
  EXPECT_EQ(items[1].kind, "alert");
  EXPECT_NE(items[1].text.find("memory growth (critical) on GPU 0"), std::string::npos);
  EXPECT_EQ(items[2].kind, "steady_state");  // not repeated as a critical alert
}

TEST(VerdictHeadline, ImbalanceIsInTheSteadyStateHeadlineAndStartUpIsApart) {
  const auto items = build_headline(two_gpu_verdict(false, false));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].kind, "steady_state");
  EXPECT_NE(items[0].text.find("imbalance: GPU 1 waited on GPU 0 for 30.0 s"), std::string::npos)
      << items[0].text;
  EXPECT_NE(items[0].text.find("between 10.0 s of start-up and 5.0 s of tear-down"),
            std::string::npos)
      << items[0].text;
  // Words, not ids.
  EXPECT_EQ(items[0].text.find("compute_bound"), std::string::npos);
  EXPECT_NE(items[0].text.find("compute-bound"), std::string::npos);
  EXPECT_EQ(items[1].kind, "edges");
}

// --- the order of the fixes -------------------------------------------------

TEST(VerdictFixes, FollowTheHeadlineAndNameTheirGpus) {
  const Verdict v = two_gpu_verdict(true, true);
  JobOutcome oom;
  oom.end = JobEnd::Failed;
  oom.exit_code = 1;
  oom.out_of_memory = true;
  oom.gpu = 0;
  FixInputs in;
  in.end = 100;
  in.count = 6;
  in.steady = &v.steady;
  in.outcome = &oom;
  in.job_gpus = 2;
  const auto fixes = rank_fixes(v.diagnosis, in);
  ASSERT_GE(fixes.size(), 5u);
  EXPECT_EQ(fixes[0].about, "out_of_memory");
  EXPECT_EQ(fixes[1].about, "alert:memory_growth");  // explains the death
  EXPECT_EQ(fixes[2].about, "alert:stalled");
  EXPECT_EQ(fixes[3].about, "state:waiting_on_peer");
  EXPECT_EQ(fixes[3].text, "GPU 1: Balance the work.");
  // Idle in GPU 1's steady state is named; start-up idle is no finding.
  bool idle_named = false;
  for (const auto& f : fixes) {
    if (f.about == "state:idle") {
      EXPECT_EQ(f.gpus, std::vector<int>{1});
      EXPECT_EQ(f.text, "GPU 1: Nothing runs: release it.");
      idle_named = true;
    }
  }
  EXPECT_TRUE(idle_named);
}

TEST(VerdictFixes, TheSameAdviceFromTwoFindingsIsGivenOnce) {
  diagnosis::DiagnosisReport r;
  auto hung = run(0, 0, 100, diagnosis::GpuState::SmUnderused, "Confirm the hang.");
  hung.fixes.push_back("Launch more blocks.");
  r.timeline.push_back(hung);
  r.alerts.push_back(alert("stalled", diagnosis::Severity::Critical, 10, "Confirm the hang."));
  FixInputs in;
  in.end = 100;
  const auto fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_EQ(fixes[0].text, "Confirm the hang.");
  EXPECT_EQ(fixes[0].about, "alert:stalled");
  EXPECT_EQ(fixes[1].text, "Launch more blocks.");
}

TEST(VerdictFixes, StartUpAndTearDownAreNoFindings) {
  diagnosis::DiagnosisReport r;
  r.timeline.push_back(run(0, 0, 15, diagnosis::GpuState::Idle, "Nothing runs: release it."));
  r.timeline.push_back(run(0, 15, 56, diagnosis::GpuState::ComputeBound, "Fuse kernels."));
  r.timeline.push_back(run(0, 56, 58, diagnosis::GpuState::Idle, "Nothing runs: release it."));
  const SteadyState steady = find_steady_state(r);
  EXPECT_DOUBLE_EQ(steady.startup_s, 15);
  EXPECT_DOUBLE_EQ(steady.teardown_s, 2);
  FixInputs in;
  in.steady = &steady;
  const auto fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].text, "Fuse kernels.");  // one GPU: no name
}

TEST(VerdictFixes, ASecondOfKernelsWhileTheJobLoadsIsStartUp) {
  diagnosis::DiagnosisReport r;
  r.timeline.push_back(run(0, 0, 1.1, diagnosis::GpuState::HostBound, "Feed the GPU."));
  r.timeline.push_back(run(0, 1.1, 10, diagnosis::GpuState::Idle, "Nothing runs: release it."));
  r.timeline.push_back(run(0, 10, 50, diagnosis::GpuState::HostBound, "Feed the GPU."));
  const SteadyState steady = find_steady_state(r);
  ASSERT_TRUE(steady.any_work());
  EXPECT_DOUBLE_EQ(*steady.start, 10);
  EXPECT_DOUBLE_EQ(steady.startup_s, 10);
  EXPECT_DOUBLE_EQ(steady.steady.seconds[diagnosis::state_index(diagnosis::GpuState::HostBound)],
                   40);
}

TEST(VerdictFixes, AGpuThatNeverWorkedHasNoStartUp) {
  diagnosis::DiagnosisReport r;
  r.timeline.push_back(run(0, 0, 60, diagnosis::GpuState::IdleHoldingMemory, "Free the memory."));
  const SteadyState steady = find_steady_state(r);
  EXPECT_FALSE(steady.any_work());
  EXPECT_DOUBLE_EQ(steady.startup_s, 0);
  FixInputs in;
  in.steady = &steady;
  const auto fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].text, "Free the memory.");
}

TEST(VerdictFixes, NoPrecisionAdviceWhenTheTensorPipesAreBusy) {
  diagnosis::DiagnosisReport r;
  auto busy = run(0, 0, 60, diagnosis::GpuState::ComputeBound,
                  "The SMs are busy. Next: mixed precision (bf16/fp16) so the tensor cores do "
                  "the math.");
  busy.fixes.push_back("Fuse kernels (torch.compile).");
  r.timeline.push_back(busy);
  FixInputs in;
  in.steady_tensor_pct = 36;
  auto fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].text, "Fuse kernels (torch.compile).");
  in.steady_tensor_pct = 3;  // fp32 on CUDA cores: the advice stands
  fixes = rank_fixes(r, in);
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_TRUE(advises_precision(fixes[0].text));
}

// Issue 44: an A100 (no GPM) at 95 % utilization between idle edges. Kernel time
// is work: the steady state is the busy minute, the edges the idle seconds, and
// the headline says what was not measured and what would settle it.
Trace ampere_trace(int idle_before, int busy, int idle_after) {
  Trace t = one_gpu_trace("NVIDIA A100-SXM4-80GB");
  for (int i = 1; i <= idle_before + busy + idle_after; ++i) {
    Sample s;
    s.t = 1000 + i;
    const bool working = i > idle_before && i <= idle_before + busy;
    s.values.set(Metric::GpuUtil, working ? 95.0 : 0.0);
    s.values.set(Metric::MemUtil, working ? 40.0 : 0.0);
    s.values.set(Metric::MemUsedMib, 6000);
    s.values.set(Metric::PowerW, working ? 350.0 : 60.0);
    t.samples.push_back(s);
  }
  return t;
}

TEST(VerdictWithoutGpm, KernelTimeIsTheSteadyStateAndTheHeadlineSaysWhatWasNotMeasured) {
  VerdictOptions o;
  o.price_per_gpu_hour = 2.0;
  const Verdict v = build_verdict(ampere_trace(10, 60, 8), o);
  ASSERT_FALSE(v.headline.empty());
  const std::string& h = v.headline.front().text;
  EXPECT_EQ(v.headline.front().kind, "steady_state") << h;
  EXPECT_NE(h.find("busy with kernels 100 %"), std::string::npos) << h;
  EXPECT_NE(h.find("SM activity was not measured: GPM needs Hopper or newer (this GPU is Ampere)."),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("gpulens run --kernels"), std::string::npos) << h;
  EXPECT_NEAR(v.startup_share, 10.0 / 78, 0.04);
  EXPECT_NEAR(v.teardown_share, 8.0 / 78, 0.04);
  ASSERT_FALSE(v.states.empty());
  EXPECT_EQ(v.states.front().state, diagnosis::GpuState::Busy);
  ASSERT_TRUE(v.cost.working_unmeasured);
  EXPECT_FALSE(v.cost.inefficiency);
  const std::string text = render::verdict_to_text(v);
  EXPECT_NE(text.find("working (how well not measured)"), std::string::npos) << text;
}

TEST(VerdictWithoutGpm, AJobBusyFromItsFirstSecondHasWorkNotNoGpuWork) {
  // A Slurm job's range of the agent's history: no start-up to set apart.
  VerdictOptions o;
  o.edges_apart = false;
  const Verdict v = build_verdict(ampere_trace(0, 57, 0), o);
  ASSERT_FALSE(v.headline.empty());
  EXPECT_EQ(v.headline.front().text.find("No GPU work"), std::string::npos)
      << v.headline.front().text;
  EXPECT_TRUE(v.steady.any_work());
}

}  // namespace
}  // namespace gpulens::verdict

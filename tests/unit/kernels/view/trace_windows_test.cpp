// SPDX-License-Identifier: Apache-2.0
// `gpulens run --kernels` traced in windows: the schedule every process of a job
// follows, the windows taken as the GPU saw them (the queue at the close), and
// the analysis asked over the windows alone.
#include "kernels/view/trace_windows.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/trace_reader.hpp"
#include "inject/chunk_builder.hpp"
#include "inject/schedule.hpp"
#include "kernel_lines.hpp"
#include "kernels/view/analysis.hpp"
#include "kernels/view/reconcile.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::kernels {
namespace {

using inject::parse_schedule;
using inject::TraceSchedule;
using inject::window_at_or_after;
using nlohmann::json;

constexpr std::int64_t kS = 1'000'000'000;

TEST(KernelsSchedule, RoundTripsThroughTheEnvironmentsForm) {
  TraceSchedule s{1'800'000'000'123'456'789, 10, 2, 20};
  const auto back = parse_schedule(inject::format_schedule(s));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->epoch_unix_ns, s.epoch_unix_ns);
  EXPECT_DOUBLE_EQ(back->first_s, 10);
  EXPECT_DOUBLE_EQ(back->window_s, 2);
  EXPECT_DOUBLE_EQ(back->every_s, 20);
  const auto fine = parse_schedule("5:0.25:0.2:0.5");
  ASSERT_TRUE(fine.has_value());
  EXPECT_DOUBLE_EQ(fine->window_s, 0.2);
}

TEST(KernelsSchedule, RefusesWhatCannotBeAScheduleInsteadOfGuessing) {
  for (const char* bad : {"", "1:2:3", "1:2:3:4:5:6", "x:1:1:5", "1:1:0:5", "1:1:5:5", "1:1:6:5",
                          "1:-1:1:5", "1:1:1:-5", "1:1:1:nan", "1:1:1:5 "}) {
    EXPECT_FALSE(parse_schedule(bad).has_value()) << bad;
  }
  EXPECT_TRUE(parse_schedule("1:0:3:0").has_value());  // every 0: the whole job
}

TEST(KernelsSchedule, WindowsFollowTheJobsClock) {
  const TraceSchedule s{100 * kS, 10, 2, 20};
  auto w = window_at_or_after(s, 100 * kS);  // the job's start: the first is 10 s later
  EXPECT_EQ(w.start_ns, 110 * kS);
  EXPECT_EQ(w.end_ns, 112 * kS);
  w = window_at_or_after(s, 111 * kS);  // inside it
  EXPECT_EQ(w.start_ns, 110 * kS);
  w = window_at_or_after(s, 112 * kS);  // just after: the next one
  EXPECT_EQ(w.start_ns, 130 * kS);
  w = window_at_or_after(s, 175 * kS);
  EXPECT_EQ(w.start_ns, 190 * kS);
  EXPECT_EQ(w.end_ns, 192 * kS);
}

TEST(KernelsSchedule, TheSpreadFormRoundTripsAndTheFourFieldFormStaysFixed) {
  const TraceSchedule s = inject::spread_schedule(7 * kS, 2, 20);
  EXPECT_DOUBLE_EQ(s.ramp_s, 4);
  EXPECT_DOUBLE_EQ(s.first_s, 0);
  const auto back = parse_schedule(inject::format_schedule(s));
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->spread());
  EXPECT_DOUBLE_EQ(back->ramp_s, 4);
  EXPECT_FALSE(parse_schedule("1:10:2:20")->spread());
  EXPECT_FALSE(parse_schedule("1:10:2:20:0")->spread());  // 0: the fixed layout
  for (const char* bad : {"1:0:2:20:2", "1:0:2:20:-4", "1:0:2:20:x", "1:0:2:20:4:1"}) {
    EXPECT_FALSE(parse_schedule(bad).has_value()) << bad;  // a slot must hold its window
  }
  // A short period: the first slot is the period.
  EXPECT_DOUBLE_EQ(inject::spread_schedule(0, 2, 3).ramp_s, 3);
}

// The starts (seconds after the anchor) of the windows of `s` up to `until_s`.
std::vector<double> spread_starts(const TraceSchedule& s, double until_s) {
  std::vector<double> starts;
  const std::int64_t anchor = std::max(s.epoch_unix_ns, s.origin_unix_ns);
  for (std::int64_t now = anchor;;) {
    const auto w = window_at_or_after(s, now);
    if (w.start_ns >= anchor + static_cast<std::int64_t>(until_s * 1e9)) break;
    starts.push_back(static_cast<double>(w.start_ns - anchor) / 1e9);
    now = w.end_ns;
  }
  return starts;
}

TEST(KernelsSchedule, ASpreadScheduleOpensAtTheFirstCudaStartAndTracesAShortJobInProportion) {
  TraceSchedule s = inject::spread_schedule(100 * kS, 2, 20);
  s.origin_unix_ns = 103 * kS;  // the job's first process started CUDA 3 s in
  // The first window opens at once, then at the starts of slots of 4, 6, 9 and
  // 13.5 s: a 30-s job gets four windows spread over it, not one by chance.
  const auto starts = spread_starts(s, 30);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_DOUBLE_EQ(starts[0], 0);
  EXPECT_DOUBLE_EQ(starts[1], 4);
  EXPECT_DOUBLE_EQ(starts[2], 10);
  EXPECT_DOUBLE_EQ(starts[3], 19);
  // A process that starts CUDA later joins the same windows.
  EXPECT_EQ(window_at_or_after(s, 105 * kS).start_ns, 107 * kS);
  EXPECT_EQ(window_at_or_after(s, 108 * kS).start_ns, 107 * kS);  // inside it
  EXPECT_EQ(window_at_or_after(s, 109 * kS).start_ns, 113 * kS);
}

TEST(KernelsSchedule, ASpreadScheduleSettlesToOneWindowPerPeriodWithoutAliasing) {
  TraceSchedule s = inject::spread_schedule(0, 2, 20);
  const auto starts = spread_starts(s, 3600);
  // The ramp ends at 32.5 s; then one window in each 20-s slot: the traced share
  // tends to 10 %, with the ramp's windows on top.
  std::size_t steady = 0;
  std::vector<double> phase;  // where in its slot each steady window lies
  for (double t : starts) {
    if (t < 32.5) continue;
    const double slot = std::floor((t - 32.5) / 20);
    EXPECT_EQ(slot, static_cast<double>(steady)) << t;     // one per slot
    EXPECT_LE(t + 2, 32.5 + (slot + 1) * 20 + 1e-9) << t;  // whole inside it
    phase.push_back((t - 32.5) - slot * 20);
    ++steady;
  }
  EXPECT_EQ(starts.size() - steady, 4u);
  EXPECT_EQ(steady, 178u);  // (3600 - 32.5) / 20
  // A job alternating two 10-s phases (a 20-s cycle) is seen in both halves of
  // the period about equally: the positions are spread, not one.
  std::size_t first_half = 0;
  for (double p : phase) first_half += (p + 1 < 10) ? 1 : 0;
  EXPECT_GT(first_half, steady * 4 / 10);
  EXPECT_LT(first_half, steady * 6 / 10);
}

TEST(KernelsSchedule, TheNodesWindowsAreOnTheWallClockForEveryProcess) {
  // Two processes that started at different moments trace the same windows:
  // 2 s from :10, :30 and :50 of each minute.
  const TraceSchedule s = inject::node_schedule();
  const std::int64_t minute = 1'700'000'040'000'000'000;  // a whole minute, in ns
  for (std::int64_t started : {minute + 1'000'000'000, minute + 9'999'000'000}) {
    const auto w = window_at_or_after(s, started);
    EXPECT_EQ(w.start_ns, minute + 10'000'000'000);
    EXPECT_EQ(w.end_ns, minute + 12'000'000'000);
  }
  EXPECT_EQ(window_at_or_after(s, minute + 12'500'000'000).start_ns, minute + 30'000'000'000);
}

TEST(KernelsWindows, AWindowOnAFullQueueIsTakenAsTheGpuRanIt) {
  // The GPU is busy throughout; work launched before the window opened runs its
  // first 80 ms, and what was launched before it closed runs 80 ms past the close.
  const Spans opened = {{10.0, 12.0}};
  const Spans busy = {{10.08, 12.08}};
  const auto seen = windows_as_seen(opened, busy);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NEAR(seen[0].first, 10.08, 1e-9);
  EXPECT_NEAR(seen[0].second, 12.08, 1e-9);
  EXPECT_NEAR(idle_over_spans(busy, seen).idle_share, 0.0, 1e-9);
  // As opened and closed, it would read 4 % idle that no gap explains.
  EXPECT_NEAR(idle_over_spans(busy, opened).idle_share, 0.04, 1e-9);
}

TEST(KernelsWindows, AnIdleCloseKeepsTheWindowAndItsIdleEdges) {
  const Spans opened = {{10.0, 12.0}, {30.0, 32.0}, {50.0, 52.0}};
  const Spans busy = {{10.5, 10.6}, {11.5, 11.6}, {31.0, 31.9}};  // nothing in the third
  const auto seen = windows_as_seen(opened, busy);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen, opened);
  const auto st = idle_over_spans(busy, seen);
  EXPECT_NEAR(st.window_s, 6.0, 1e-9);
  EXPECT_NEAR(st.busy_s, 1.1, 1e-9);
  // Gaps cut at each window's edges: 0.5, 0.9, 0.4 | 1.0, 0.1 | 2.0 (all > 10 ms).
  EXPECT_EQ(st.gaps.count[4], 6u);
}

TEST(KernelsWindows, StepsCountOnlyWhenWholeInsideOneWindow) {
  std::vector<double> steps;
  for (int i = 0; i <= 20; ++i) steps.push_back(0.3 * i);
  const auto runs = step_runs_inside(steps, {{0.95, 2.05}, {4.45, 5.2}});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], std::make_pair(std::size_t{4}, std::size_t{6}));    // 1.2 .. 1.8
  EXPECT_EQ(runs[1], std::make_pair(std::size_t{15}, std::size_t{17}));  // 4.5 .. 5.1
  EXPECT_TRUE(step_runs_inside(steps, {{1.0, 1.1}}).empty());
}

// A starved training job: steps of 300 ms, 50 ms of GEMMs then 250 ms waiting for
// data, traced in windows [2.95, 5.05] and [8.95, 11.05] s of the process's clock.
std::vector<json> starved_sampled_record(Trace& trace, bool with_nvtx) {
  constexpr std::int64_t kStepBaseUnixNs = 1'800'000'000'000'000'000;
  inject::ChunkBuilder c(0);
  inject::KernelLaunch k;
  k.name = "sm90_xmma_gemm_bf16bf16_bf16f32";
  k.config.grid[0] = 1056, k.config.grid[1] = 1, k.config.grid[2] = 1;
  k.config.block[0] = 128, k.config.block[1] = 1, k.config.block[2] = 1;
  k.config.registers = 32;
  const std::vector<std::pair<double, double>> windows = {{2.95, 5.05}, {8.95, 11.05}};
  auto inside = [&](double t) {
    for (const auto& [a, b] : windows) {
      if (t >= a && t < b) return true;
    }
    return false;
  };
  auto ns = [](double s) { return static_cast<std::uint64_t>(std::llround(s * 1e9)); };
  std::uint32_t range_id = 1;
  for (int s = 0; s < 40; ++s) {
    const double step0 = 0.3 * s;
    trace.marks.push_back(
        {static_cast<double>(kStepBaseUnixNs) / 1e9 + step0, "step", json::object()});
    // The data range runs whether traced or not: NVTX markers are always on.
    if (with_nvtx) {
      c.range_start(range_id, ns(step0 + 0.05), "data", "");
      c.range_end(range_id++, ns(step0 + 0.3));
    }
    for (int i = 0; i < 10; ++i) {
      const double a = step0 + 0.005 * i;
      if (inside(a)) c.kernel(k, ns(a), ns(a + 0.005), 7);  // launched inside a window
    }
  }
  testing::ProcessLines o;
  o.h100 = false;
  o.sampling = ProcessRecord::Sampling{3, 2.1, 6};
  for (const auto& [a, b] : windows) o.windows.emplace_back(ns(a), ns(b));
  return testing::process_lines(c, o);
}

TEST(KernelsWindowsAnalysis, AStarvedJobReadsHostBoundFromItsWindowsAlone) {
  Trace trace;
  testing::add_lines(trace, starved_sampled_record(trace, false));
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->available);
  EXPECT_TRUE(v->sampling.sampled);
  EXPECT_EQ(v->sampling.windows, 2u);
  EXPECT_NEAR(v->sampling.traced_s, 4.2, 1e-6);
  // 12 steps lie whole inside the windows (3.0 .. 4.8 and 9.0 .. 10.8: 6 each).
  const auto& d = v->devices.at(0);
  ASSERT_TRUE(d.steps.has_value());
  EXPECT_EQ(d.steps->steps, 12u);
  EXPECT_NEAR(d.steps->mean_step_s, 0.3, 1e-6);
  EXPECT_NEAR(d.steps->idle.idle_share, 250.0 / 300.0, 1e-4);
  // Over the windows (edges included) the GPU ran 7 bursts of 50 ms per window.
  EXPECT_NEAR(d.activity.window_s, 4.2, 1e-6);
  EXPECT_NEAR(d.activity.busy_s, 14 * 0.05, 1e-6);
  EXPECT_EQ(v->launches, 140u);  // the windows' launches, not the job's 400
  bool host_bound = false;
  for (const auto& f : v->findings) host_bound = host_bound || f.kind == "host_bound";
  EXPECT_TRUE(host_bound);
  EXPECT_NE(v->headline.find("The GPU was busy 17 % of the marked steps inside the trace windows"),
            std::string::npos)
      << v->headline;
  const std::string text = render::kernels_to_text(*v);
  EXPECT_NE(text.find("Traced in 2 windows of 2.1 s, one every 6 s (4.20 s in all"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("of the 4.20 s of trace windows"), std::string::npos) << text;
  const auto j = render::kernels_to_json(*v);
  EXPECT_EQ(j["sampling"]["windows"], 2);
}

TEST(KernelsWindowsAnalysis, NvtxRangesAreMeasuredOnlyInsideTheWindows) {
  Trace trace;
  testing::add_lines(trace, starved_sampled_record(trace, true));
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->nvtx);
  ASSERT_EQ(v->nvtx->ranges.size(), 1u);
  const auto& data = v->nvtx->ranges[0];
  EXPECT_EQ(data.count, 40u);  // every instance counted ...
  // ... but busy and idle only from those whole inside the windows: 3.05-3.3 to
  // 4.55-4.8 and 9.05-9.3 to 10.55-10.8 (4.85-5.1 and 10.85-11.1 cross the close).
  EXPECT_EQ(data.measured, 12u);
  EXPECT_NEAR(data.busy_share, 0.0, 1e-9);  // the GEMMs run before the data range
  // The idle of the marked steps inside the windows lies in `data`.
  EXPECT_GT(v->nvtx->window_idle_s, 0);
  EXPECT_NEAR(data.attributed_idle_s / v->nvtx->window_idle_s, 1.0, 1e-6);
}

TEST(KernelsWindowsAnalysis, WindowsTheCountersContradictAreSaidInTheHeadlineAndEveryForm) {
  // The starved job's windows read 17 % busy, but the counters of the recording
  // saw kernels running 80 % of each second from 0 to 12 s: the windows do not
  // stand for the job, and the view says so beside the job-wide figure (and
  // that its NVTX ranges are the windows' alone).
  Trace trace;
  testing::add_lines(trace, starved_sampled_record(trace, true));
  DeviceInfo gpu;
  gpu.index = 0;
  trace.header.devices.push_back(gpu);
  trace.header.interval_s = 1.0;
  const double base = static_cast<double>(testing::kBaseUnixNs) / 1e9;
  for (int i = 1; i <= 12; ++i) {
    gpulens::Sample s;
    s.t = base + i;
    s.values.set(Metric::GpuUtil, 80.0);
    trace.samples.push_back(s);
  }
  trace.marks.push_back({base + 0, "early:start", json::object()});
  trace.marks.push_back({base + 2, "early:end", json::object()});
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->available);
  ASSERT_EQ(v->reconciliation.size(), 1u);
  const auto& r = v->reconciliation[0];
  EXPECT_NEAR(r.job.counters_share, 0.8, 1e-9);
  EXPECT_TRUE(r.job.shares_differ());
  EXPECT_NE(v->headline.find("over the whole job the counters saw kernels running 80 % of the "
                             "time, so the windows' figures do not stand for the whole job"),
            std::string::npos)
      << v->headline;
  ASSERT_EQ(r.phases.size(), 1u);
  EXPECT_FALSE(r.phases[0].windows_share.has_value());  // no window in 0 .. 2 s
  const std::string text = render::kernels_to_text(*v);
  EXPECT_NE(text.find("phase `early` (2.00 s): no trace window fell in it"), std::string::npos)
      << text;
  EXPECT_NE(text.find(kNvtxWindowsOnly), std::string::npos) << text;
  const auto j = render::kernels_to_json(*v);
  EXPECT_EQ(j["windows_vs_counters"][0]["job"]["shares_differ"], true);
  EXPECT_EQ(j["windows_vs_counters"][0]["phases"][0]["name"], "early");
  EXPECT_TRUE(j["windows_vs_counters"][0]["phases"][0]["windows_busy_share"].is_null());
  EXPECT_EQ(j["nvtx"]["windows_only"], true);
  EXPECT_NE(render::kernels_to_html(*v).find("<p><b>GPU 0: the trace windows"), std::string::npos);
}

TEST(KernelsWindowsAnalysis, AJobThatEndedBeforeItsFirstWindowIsToldHowToTraceIt) {
  Trace trace;
  trace.kernel_records.push_back({{"x_kernels", 3},
                                  {"pid", 7},
                                  {"status", "ok"},
                                  {"clock", {{"base_ns", 0}, {"base_unix_ns", 1}}},
                                  {"sampling", {{"first_s", 10}, {"window_s", 2}, {"every_s", 20}}},
                                  {"windows", json::array()}});
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v.has_value());
  EXPECT_FALSE(v->available);
  ASSERT_FALSE(v->notes.empty());
  EXPECT_NE(v->notes[0].find("ended before its first trace window (10 s after it started)"),
            std::string::npos)
      << v->notes[0];
  EXPECT_NE(v->notes[0].find("--kernels-every 0"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::kernels

// SPDX-License-Identifier: Apache-2.0
// Hangs on synthetic windows built from the physics of each case: hung kernels
// on any number of SMs, the steady small kernels and the integer work that must
// not read as hangs, a hang's fixes leading alone, and the job's own memory
// inside `run` (engine-fed). Steady windows (copies,
// blips, the fixes by evidence) are in steady_window_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <utility>

#include "core/gpm_interval.hpp"
#include "diagnosis/engine.hpp"
#include "diagnosis/fixes.hpp"
#include "diagnosis/timeline.hpp"
#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::h100;
using testing::proc;
using Values = std::initializer_list<std::pair<Metric, double>>;

TraceHeader header() {
  TraceHeader h;
  h.interval_s = 0.1;
  h.devices.push_back(h100());
  return h;
}

// Every GPM pipe and DRAM at rest, as a spinning kernel leaves them.
void quiet_pipes(Sample& s) {
  for (Metric m :
       {Metric::TensorActive, Metric::Fp16Active, Metric::Fp32Active, Metric::Fp64Active}) {
    s.values.set(m, 0.0);
  }
  s.values.set(Metric::DramActive, 0.001);
}

// A kernel spinning on `sms` of 132 SMs, waiting for a flag that never comes:
// SM activity is the resident share, nothing else moves (H100 figures).
std::function<void(Sample&, double)> hang_on(double sms) {
  return [sms](Sample& s, double) {
    s.values.set(Metric::GpuUtil, 100);
    s.values.set(Metric::SmActive, sms / 132 * 100);
    quiet_pipes(s);
    s.values.set(Metric::PowerW, 116 + sms * 0.15);
    s.values.set(Metric::MemUsedMib, 1200);
    s.values.set(Metric::PcieRxMibs, 2);
    s.values.set(Metric::PcieTxMibs, 3);
    s.values.set(Metric::NvlinkRxMibs, 0);
  };
}

using Fill = std::function<void(Sample&, double)>;

struct Fed {
  std::vector<AlertEvent> events;
};

// One sample every 100 ms from t0 for `seconds`.
Fed feed(DiagnosisEngine& engine, double t0, double seconds, const Fill& fill) {
  Fed out;
  for (int i = 0; i < static_cast<int>(seconds * 10); ++i) {
    const double t = t0 + 0.1 * i;
    Tick tick;
    tick.t = t;
    Sample s;
    s.t = t;
    s.gpu = 0;
    fill(s, t);
    tick.samples.push_back(std::move(s));
    engine.on_tick(tick);
    for (auto& e : engine.take_events()) out.events.push_back(std::move(e));
  }
  return out;
}

int count(const std::vector<AlertEvent>& events, const std::string& rule) {
  int n = 0;
  for (const auto& e : events) n += e.rule == rule && e.kind == AlertEvent::Kind::Firing;
  return n;
}

bool contains(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

// --- hangs -------------------------------------------------------------------

TEST(Hang, StalledFiresOnAHungKernelWhateverItsSmShare) {
  // 1, 8, 16, 32, 64 and all 132 SMs: NCCL runs one block per channel, so a
  // rank of a hung collective may hold any number of them.
  for (double sms : {1.0, 8.0, 16.0, 32.0, 64.0, 132.0}) {
    DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
    EXPECT_EQ(count(feed(engine, 0, 60, hang_on(sms)).events, "stalled"), 0) << sms;
    EXPECT_EQ(count(feed(engine, 60, 10, hang_on(sms)).events, "stalled"), 1) << sms;
    const auto fixes = engine.fixes(0);
    ASSERT_FALSE(fixes.empty());
    EXPECT_TRUE(contains(fixes[0], "py-spy dump")) << sms << ": " << fixes[0];
  }
}

TEST(Hang, AHungKernelOnEverySmKeepsItsStateAndTheHangLeads) {
  DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
  feed(engine, 0, 80, hang_on(132));
  // The state vocabulary calls a fully resident GPU compute_bound; the alert
  // and its fix say what it is.
  EXPECT_EQ(engine.status(0).state.state, GpuState::ComputeBound);
  const auto fixes = engine.fixes(0);
  ASSERT_GE(fixes.size(), 3u);
  EXPECT_TRUE(contains(fixes[0], "py-spy"));
  EXPECT_TRUE(contains(fixes[1], "NCCL_DEBUG=INFO"));
  EXPECT_TRUE(contains(fixes[1], "init_process_group(timeout=...)"));
  EXPECT_TRUE(contains(fixes[2], "cuda-gdb -p"));
  // No tuning advice on a hang: the state's own fixes are left out.
  for (std::size_t i = 3; i < fixes.size(); ++i) {
    EXPECT_FALSE(contains(fixes[i], "SMs")) << fixes[i];
    EXPECT_FALSE(contains(fixes[i], "blocks")) << fixes[i];
  }
}

TEST(Hang, SteadySmallKernelsDoingWorkAreNotHangs) {
  // 8 blocks streaming a buffer: DRAM moves; 8 blocks of FP32 FMA chains: the
  // FP32 pipe works. Both are flat and low-power, like a hang, but not hung.
  const Fill stream8 = [](Sample& s, double t) {
    hang_on(8)(s, t);
    s.values.set(Metric::DramActive, 2.6);
  };
  const Fill fma8 = [](Sample& s, double t) {
    hang_on(8)(s, t);
    s.values.set(Metric::Fp32Active, 5.5);
  };
  for (const auto& fill : {stream8, fma8}) {
    DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
    EXPECT_EQ(count(feed(engine, 0, 200, fill).events, "stalled"), 0);
    EXPECT_EQ(engine.status(0).state.state, GpuState::SmUnderused);
  }
}

TEST(Hang, OneBurstOfMathInTheWindowIsNotAHang) {
  // The window maximum, not the mean: a kernel that does real work once per
  // second is progressing even if its mean pipe activity rounds to nothing.
  DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
  const auto fed = feed(engine, 0, 200, [](Sample& s, double t) {
    hang_on(16)(s, t);
    if (static_cast<int>(t * 10) % 10 == 0) s.values.set(Metric::Fp32Active, 0.5);
  });
  EXPECT_EQ(count(fed.events, "stalled"), 0);
}

TEST(Hang, MovingCountersHighPowerOrTrafficAreNotHangs) {
  const std::vector<Fill> busy{
      [](Sample& s, double t) {  // power high for the activity
        hang_on(32)(s, t);
        s.values.set(Metric::PowerW, 400);
      },
      [](Sample& s, double t) {  // SM activity moving
        hang_on(32)(s, t);
        s.values.set(Metric::SmActive, 20 + 5 * (static_cast<int>(t * 10) % 3));
      },
      [](Sample& s, double t) {  // memory moving
        hang_on(32)(s, t);
        s.values.set(Metric::MemUsedMib, 1200 + 100 * (static_cast<int>(t) % 5));
      },
      [](Sample& s, double t) {  // copies arriving
        hang_on(32)(s, t);
        s.values.set(Metric::PcieRxMibs, 2000);
      },
  };
  for (std::size_t i = 0; i < busy.size(); ++i) {
    DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
    EXPECT_EQ(count(feed(engine, 0, 200, busy[i]).events, "stalled"), 0) << i;
  }
}

TEST(Hang, WithoutPipeOrDramFiguresTheRuleDoesNotJudge) {
  DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
  const auto fed = feed(engine, 0, 200, [](Sample& s, double t) {
    hang_on(16)(s, t);
    for (Metric m : {Metric::TensorActive, Metric::Fp16Active, Metric::Fp32Active,
                     Metric::Fp64Active, Metric::DramActive}) {
      s.values.clear(m);
    }
  });
  EXPECT_EQ(count(fed.events, "stalled"), 0);
}

// Three GPUs of one job (no process says otherwise, so every watched GPU is one
// job): the ranks on `hung` spin in a collective the others never joined.
std::vector<AlertEvent> feed_job(DiagnosisEngine& engine, const std::vector<int>& hung,
                                 double seconds) {
  std::vector<AlertEvent> events;
  for (int i = 0; i < static_cast<int>(seconds * 10); ++i) {
    Tick tick;
    tick.t = 0.1 * i;
    for (int gpu = 0; gpu < 3; ++gpu) {
      Sample s;
      s.t = tick.t;
      s.gpu = gpu;
      if (std::find(hung.begin(), hung.end(), gpu) != hung.end()) {
        hang_on(16)(s, s.t);
      } else {  // the late rank: on the host, no kernel, its buffers allocated
        s.values.set(Metric::GpuUtil, 0);
        s.values.set(Metric::SmActive, 0);
        quiet_pipes(s);
        s.values.set(Metric::PowerW, 72);
        s.values.set(Metric::MemUsedMib, 1200);
      }
      tick.samples.push_back(std::move(s));
    }
    engine.on_tick(tick);
    for (auto& e : engine.take_events()) events.push_back(std::move(e));
  }
  return events;
}

TraceHeader three_gpus() {
  TraceHeader h = header();
  for (int gpu = 1; gpu < 3; ++gpu) {
    h.devices.push_back(h100());
    h.devices.back().index = gpu;
  }
  return h;
}

TEST(Hang, TheStalledAlertNamesTheRankThatDidNotArrive) {
  DiagnosisEngine engine(three_gpus(), DiagnosisConfig::defaults());
  const auto events = feed_job(engine, {0, 1}, 75);
  int fired = 0;
  for (const auto& e : events) {
    if (e.rule != "stalled" || e.kind != AlertEvent::Kind::Firing) continue;
    ++fired;
    EXPECT_NE(e.gpu, 2) << "the late rank runs nothing: it is not hung";
    EXPECT_TRUE(contains(e.message, "GPU 2 of the same job runs no kernel")) << e.message;
    ASSERT_FALSE(e.fixes.empty());
    EXPECT_TRUE(contains(e.fixes[0], "Start with GPU 2")) << e.fixes[0];
  }
  EXPECT_EQ(fired, 2);
}

TEST(Hang, EveryRankHungNamesNoPeer) {
  DiagnosisEngine engine(three_gpus(), DiagnosisConfig::defaults());
  const auto events = feed_job(engine, {0, 1, 2}, 75);
  int fired = 0;
  for (const auto& e : events) {
    if (e.rule != "stalled" || e.kind != AlertEvent::Kind::Firing) continue;
    ++fired;
    EXPECT_FALSE(contains(e.message, "no kernel meanwhile")) << e.message;
    ASSERT_FALSE(e.fixes.empty());
    EXPECT_TRUE(contains(e.fixes[0], "py-spy dump")) << e.fixes[0];
  }
  EXPECT_EQ(fired, 3);
}

TEST(Hang, APhaseWithAHangLeadsWithTheHangsFix) {
  Trace trace;
  trace.header = header();
  trace.marks.push_back({10.0, "hang:start", nlohmann::json::object()});
  trace.marks.push_back({140.0, "hang:end", nlohmann::json::object()});
  for (int i = 0; i < 1500; ++i) {
    Sample s;
    s.t = 0.1 * i;
    s.gpu = 0;
    if (s.t >= 10.0 && s.t <= 140.0) {
      hang_on(16)(s, s.t);
    } else {
      s.values.set(Metric::GpuUtil, 0);
      s.values.set(Metric::SmActive, 0);
    }
    trace.samples.push_back(std::move(s));
  }
  const auto report = diagnose_trace(trace, DiagnosisConfig::defaults());
  const PhaseSummary* hang = nullptr;
  for (const auto& p : report.phases) {
    if (p.name == "hang") hang = &p;
  }
  ASSERT_NE(hang, nullptr);
  EXPECT_EQ(hang->state, GpuState::SmUnderused);
  ASSERT_FALSE(hang->fixes.empty());
  EXPECT_TRUE(contains(hang->fixes[0], "py-spy")) << hang->fixes[0];
  bool run_led = false;
  for (const auto& r : report.timeline) {
    if (r.state == GpuState::SmUnderused && !r.fixes.empty()) {
      run_led = contains(r.fixes[0], "py-spy");
    }
  }
  EXPECT_TRUE(run_led);
  bool fired = false;
  for (const auto& a : report.alerts) fired |= a.rule == "stalled";
  EXPECT_TRUE(fired);
}

TEST(Hang, IntegerWorkOnAFewSmsIsNotAHang) {
  // 16 SMs hashing for minutes: SM activity and every counter flat, no float
  // pipe, no DRAM, low power: all a hang looks like, but the integer pipe works.
  const auto with_int = [](double pct) {
    return [pct](Sample& s, double t) {
      hang_on(16)(s, t);
      s.values.set(Metric::IntActive, pct);
    };
  };
  DiagnosisEngine engine(header(), DiagnosisConfig::defaults());
  EXPECT_EQ(count(feed(engine, 0, 120, with_int(10.0)).events, "stalled"), 0);
  // The same counters with the integer pipe at a spin's few percent: a hang.
  DiagnosisEngine spin(header(), DiagnosisConfig::defaults());
  EXPECT_EQ(count(feed(spin, 0, 120, with_int(0.4)).events, "stalled"), 1);
}

TEST(Fixes, InsideRunIdleMemoryIsTheJobsOwn) {
  const Fill hold = [](Sample& s, double) {
    s.values.set(Metric::GpuUtil, 0);
    s.values.set(Metric::SmActive, 0.0);
    s.values.set(Metric::MemUsedMib, 24576);
    s.procs = std::vector<ProcessSample>{proc(7, "python3", 24576.0, 1.0)};
  };
  DiagnosisEngine alone(header(), DiagnosisConfig::defaults());
  feed(alone, 0, 10, hold);
  ASSERT_EQ(alone.status(0).state.state, GpuState::IdleHoldingMemory);
  EXPECT_TRUE(contains(alone.fixes(0)[0], "end it or free the GPU"));

  DiagnosisEngine job(header(), DiagnosisConfig::defaults());
  Tick start;
  start.t = 0;
  start.marks.push_back({0.0, "job_start", {{"command", "python3 hold.py"}, {"pid", 7}}});
  job.on_tick(start);
  feed(job, 0.1, 10, hold);
  const auto fx = job.fixes(0);
  EXPECT_TRUE(contains(fx[0], "Your job holds 24.0 GiB")) << fx[0];
  for (const auto& x : fx) EXPECT_FALSE(contains(x, "end it or free the GPU")) << x;
}

}  // namespace
}  // namespace gpulens::diagnosis

// SPDX-License-Identifier: Apache-2.0
// The alert rules through the engine: for-duration, hysteresis, resolve,
// de-duplication, config overrides, custom rules, and the built-in rules on
// synthetic histories (one rule's tracker alone: alert_tracker_test.cpp).
#include <gtest/gtest.h>

#include <functional>

#include "diagnosis/alert_tracker.hpp"
#include "diagnosis/engine.hpp"
#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::proc;

DeviceInfo h100_at(int index = 0) {
  DeviceInfo d;
  d.index = index;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.mem_total_mib = 81559;
  d.power_limit_w = 700;
  d.max_sm_clock_mhz = 1980;
  d.pcie_gen = 5;
  d.pcie_width = 16;
  return d;
}

TraceHeader gpus_header(int gpus = 1) {
  TraceHeader h;
  h.interval_s = 1.0;
  for (int i = 0; i < gpus; ++i) h.devices.push_back(h100_at(i));
  return h;
}

using Fill = std::function<void(Sample&, double t)>;

// Feeds one sample per GPU per second from t0 for `seconds`; collects events.
std::vector<AlertEvent> feed_alerts(DiagnosisEngine& engine, double t0, double seconds,
                                    const Fill& fill, int gpus = 1) {
  std::vector<AlertEvent> events;
  for (double t = t0; t < t0 + seconds - 1e-9; t += 1.0) {
    Tick tick;
    tick.t = t;
    for (int g = 0; g < gpus; ++g) {
      Sample s;
      s.t = t;
      s.gpu = g;
      fill(s, t);
      tick.samples.push_back(std::move(s));
    }
    engine.on_tick(tick);
    for (auto& e : engine.take_events()) events.push_back(std::move(e));
  }
  return events;
}

std::vector<AlertEvent> only(const std::vector<AlertEvent>& events, const std::string& rule) {
  std::vector<AlertEvent> out;
  for (const auto& e : events) {
    if (e.rule == rule) out.push_back(e);
  }
  return out;
}

DiagnosisConfig config_from(const std::string& toml) {
  auto cfg = parse_diagnosis_config(toml, "test.toml");
  EXPECT_TRUE(cfg.ok()) << (cfg.ok() ? "" : cfg.error().message);
  return cfg.ok() ? *cfg : DiagnosisConfig::defaults();
}

void throttled(Sample& s, double) {
  s.values.set(Metric::GpuUtil, 99);
  s.values.set(Metric::SmActive, 95);
  s.values.set(Metric::ClockEventReasons, 4);
  s.values.set(Metric::SmClockMhz, 1365);
  s.values.set(Metric::PowerW, 699);
}

void healthy(Sample& s, double) {
  s.values.set(Metric::GpuUtil, 99);
  s.values.set(Metric::SmActive, 95);
  s.values.set(Metric::ClockEventReasons, 0);
  s.values.set(Metric::SmClockMhz, 1980);
}

TEST(Alerts, ForDurationDelaysFiringAndEachEpisodeFiresOnce) {
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  auto events = only(feed_alerts(engine, 0, 55, throttled), "throttled");
  EXPECT_TRUE(events.empty());  // a 5 s window fills, then 60 s must pass
  events = only(feed_alerts(engine, 55, 20, throttled), "throttled");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, AlertEvent::Kind::Firing);
  EXPECT_NE(events[0].message.find("power cap"), std::string::npos) << events[0].message;
  EXPECT_GE(events[0].t - events[0].since, 60);
  EXPECT_FALSE(events[0].fixes.empty());
  EXPECT_TRUE(only(feed_alerts(engine, 75, 100, throttled), "throttled").empty());  // de-duplicated
  ASSERT_EQ(engine.brief(0).alerts, std::vector<std::string>{"throttled"});
  events = only(feed_alerts(engine, 175, 30, healthy), "throttled");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, AlertEvent::Kind::Resolved);
  EXPECT_TRUE(engine.brief(0).alerts.empty());
}

TEST(Alerts, ConfigChangesDurationAndDisablesRules) {
  DiagnosisEngine quick(gpus_header(), config_from("[alerts.throttled]\nfor = \"10s\"\n"));
  EXPECT_EQ(only(feed_alerts(quick, 0, 20, throttled), "throttled").size(), 1u);
  DiagnosisEngine off(gpus_header(), config_from("[alerts.throttled]\nenabled = false\n"));
  EXPECT_TRUE(only(feed_alerts(off, 0, 300, throttled), "throttled").empty());
}

TEST(Alerts, CustomThresholdRuleWithHysteresis) {
  DiagnosisEngine engine(gpus_header(), config_from(R"(
[[alerts.custom]]
name = "hot"
metric = "temp_c"
op = ">="
value = 85
clear = 80
for = "5s"
severity = "critical"
message = "too hot"
)"));
  const auto temp = [](double c) {
    return [c](Sample& s, double) {
      healthy(s, 0);
      s.values.set(Metric::TempC, c);
    };
  };
  auto events = only(feed_alerts(engine, 0, 20, temp(90)), "hot");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].severity, Severity::Critical);
  EXPECT_EQ(events[0].message, "too hot");
  // Between the clear and fire lines: keeps firing, no new event.
  EXPECT_TRUE(only(feed_alerts(engine, 20, 30, temp(82)), "hot").empty());
  events = only(feed_alerts(engine, 50, 30, temp(70)), "hot");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, AlertEvent::Kind::Resolved);
}

TEST(Alerts, PacketAiRulesFireWithTheirOriginalMessages) {
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  const auto events = feed_alerts(engine, 0, 60, [](Sample& s, double) {
    s.values.set(Metric::GpuUtil, 100);
    s.values.set(Metric::SmActive, 5);
  });
  const auto high = only(events, "high_util_low_activity");
  ASSERT_EQ(high.size(), 1u);
  EXPECT_EQ(high[0].message,
            "Your GPU shows high utilization but low compute activity. This often indicates a "
            "communication or memory bottleneck.");
  const auto low = only(events, "low_efficiency");
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0].message, "GPU efficiency is low. Workload may be I/O bound.");
}

TEST(Alerts, LowEfficiencyAloneAtModerateUtilization) {
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  const auto events = feed_alerts(engine, 0, 60, [](Sample& s, double) {
    s.values.set(Metric::GpuUtil, 60);
    s.values.set(Metric::SmActive, 10);
  });
  EXPECT_EQ(only(events, "low_efficiency").size(), 1u);
  EXPECT_TRUE(only(events, "high_util_low_activity").empty());
}

// A kernel spinning on 8 of 132 SMs: resident, no pipe or DRAM work, power near idle.
void spin8(Sample& s, double) {
  s.values.set(Metric::GpuUtil, 100);
  s.values.set(Metric::SmActive, 8.0 / 132 * 100);
  s.values.set(Metric::TensorActive, 0);
  s.values.set(Metric::Fp32Active, 0);
  s.values.set(Metric::Fp16Active, 0);
  s.values.set(Metric::Fp64Active, 0);
  s.values.set(Metric::DramActive, 0.001);
  s.values.set(Metric::PowerW, 143);
  s.values.set(Metric::MemUsedMib, 4000);
  s.values.set(Metric::PcieRxMibs, 2);
  s.values.set(Metric::NvlinkRxMibs, 0);
}

TEST(Alerts, StalledFiresAfterSixtySecondsAndNotBefore) {
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  EXPECT_TRUE(only(feed_alerts(engine, 0, 60, spin8), "stalled").empty());
  const auto events = only(feed_alerts(engine, 60, 10, spin8), "stalled");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].severity, Severity::Critical);
  EXPECT_GE(events[0].t - events[0].since, 60);
  EXPECT_EQ(engine.status(0).state.state, GpuState::SmUnderused);
}

TEST(Alerts, BusyOrChangingKernelsAreNotStalled) {
  DiagnosisEngine hot(gpus_header(), DiagnosisConfig::defaults());
  EXPECT_TRUE(only(feed_alerts(hot, 0, 200,
                               [](Sample& s, double t) {
                                 spin8(s, t);
                                 s.values.set(Metric::PowerW, 400);
                               }),
                   "stalled")
                  .empty());
  DiagnosisEngine moving(gpus_header(), DiagnosisConfig::defaults());
  EXPECT_TRUE(only(feed_alerts(moving, 0, 200,
                               [](Sample& s, double t) {
                                 spin8(s, t);
                                 s.values.set(Metric::MemUsedMib,
                                              4000 + 50 * std::fmod(t, 10.0) * 10);
                               }),
                   "stalled")
                  .empty());
}

Fill memory(const std::function<double(double)>& mib) {
  return [mib](Sample& s, double t) {
    healthy(s, t);
    s.values.set(Metric::MemUsedMib, mib(t));
  };
}

TEST(Alerts, MemoryGrowthFiresOnASteadyRampWithAForecast) {
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  const auto events =
      only(feed_alerts(engine, 0, 180, memory([](double t) { return 10000 + 20 * t; })),
           "memory_growth");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].message.find("out of memory in about"), std::string::npos)
      << events[0].message;
  EXPECT_NE(events[0].message.find("1200 MiB/min"), std::string::npos) << events[0].message;
}

TEST(Alerts, MemoryGrowthForecastsAFastLeakBeforeTheDeviceFills) {
  // 8 GiB a second from 10 GiB on an 80 GB H100: full in under 9 s.
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  const auto leak = memory([](double t) { return t < 30 ? 10240 : 10240 + 8192 * (t - 30); });
  const double death = 30 + (81559 - 3072 - 10240) / 8192.0;  // a 3 GiB request fails
  const auto events = only(feed_alerts(engine, 0, death, leak), "memory_growth");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_LE(events[0].t, death - 5);
  EXPECT_NE(events[0].message.find("rising fast: 8.0 GiB/s"), std::string::npos)
      << events[0].message;
  EXPECT_NE(events[0].message.find("out of memory in about"), std::string::npos)
      << events[0].message;
}

TEST(Alerts, MemoryGrowthIgnoresAStepsTwentyGibRiseAndFall) {
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  EXPECT_TRUE(only(feed_alerts(engine, 0, 600, memory([](double t) {
                                 return 20480 + 20480 * std::fmod(t, 2.0) / 2.0;
                               })),
                   "memory_growth")
                  .empty());
}

TEST(Alerts, MemoryGrowthIgnoresASawToothAndAOneTimeAllocation) {
  DiagnosisEngine saw(gpus_header(), DiagnosisConfig::defaults());
  EXPECT_TRUE(only(feed_alerts(saw, 0, 600, memory([](double t) {
                                 return 10000 + 300 * std::fmod(t, 20.0);  // grows 6 GB, frees it
                               })),
                   "memory_growth")
                  .empty());
  DiagnosisEngine step(gpus_header(), DiagnosisConfig::defaults());
  EXPECT_TRUE(
      only(feed_alerts(step, 0, 600, memory([](double t) { return t < 100 ? 2000 : 42000; })),
           "memory_growth")
          .empty());
}

TEST(Alerts, IdleHoldingMemoryAfterTenMinutesWithItsCost) {
  DiagnosisEngine engine(gpus_header(), config_from("[diagnosis]\nprice_per_gpu_hour = 2.5\n"));
  const auto idle = [](Sample& s, double) {
    s.values.set(Metric::GpuUtil, 0);
    s.values.set(Metric::SmActive, 0);
    s.procs = std::vector<ProcessSample>{proc(9, "jupyter", 40960.0)};
  };
  EXPECT_TRUE(only(feed_alerts(engine, 0, 590, idle), "idle_holding_memory").empty());
  const auto events = only(feed_alerts(engine, 590, 30, idle), "idle_holding_memory");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].message.find("jupyter (pid 9)"), std::string::npos) << events[0].message;
  EXPECT_NE(events[0].message.find("$2.50 per hour"), std::string::npos) << events[0].message;
}

TEST(Alerts, GpuImbalanceBetweenGpusOfOneJob) {
  DiagnosisEngine engine(gpus_header(2), DiagnosisConfig::defaults());
  const auto events = only(feed_alerts(
                               engine, 0, 80,
                               [](Sample& s, double) {
                                 s.values.set(Metric::GpuUtil, 99);
                                 s.values.set(Metric::SmActive, s.gpu == 0 ? 95 : 10);
                               },
                               2),
                           "gpu_imbalance");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].gpu, 1);
}

TEST(Alerts, XidFromMarksIsDeduplicatedAndExpires) {
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  Tick tick;
  tick.t = 10;
  tick.marks.push_back({10, "xid", {{"xid", 79}, {"gpu", 0}}});
  engine.on_tick(tick);
  auto events = engine.take_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rule, "xid_error");
  EXPECT_EQ(events[0].severity, Severity::Critical);
  EXPECT_NE(events[0].message.find("fallen off the bus"), std::string::npos);
  tick.t = 20;
  tick.marks[0].t = 20;
  engine.on_tick(tick);
  EXPECT_TRUE(engine.take_events().empty());
  EXPECT_EQ(engine.firing(0).at(0).count, 2);
  Tick later;
  later.t = 700;
  engine.on_tick(later);
  events = engine.take_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, AlertEvent::Kind::Resolved);
  EXPECT_EQ(events[0].count, 2);
}

TEST(Alerts, ApplicationXidIsAWarning) {
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  Tick tick;
  tick.t = 1;
  tick.marks.push_back({1, "xid", {{"xid", 13}, {"gpu", 0}}});
  engine.on_tick(tick);
  EXPECT_EQ(engine.take_events().at(0).severity, Severity::Warning);
}

TEST(Alerts, GpuLostResolvesWhenTheGpuAnswersAgain) {
  DiagnosisEngine engine(gpus_header(), DiagnosisConfig::defaults());
  Tick lost;
  lost.t = 5;
  lost.marks.push_back({5, "gpu_lost", {{"gpu", 0}}});
  engine.on_tick(lost);
  auto events = engine.take_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rule, "gpu_lost");
  EXPECT_TRUE(engine.status(0).lost);
  events = feed_alerts(engine, 6, 1, healthy);
  ASSERT_EQ(only(events, "gpu_lost").size(), 1u);
  EXPECT_EQ(only(events, "gpu_lost")[0].kind, AlertEvent::Kind::Resolved);
}

}  // namespace
}  // namespace gpulens::diagnosis

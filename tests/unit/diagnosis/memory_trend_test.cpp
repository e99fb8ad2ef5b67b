// SPDX-License-Identifier: Apache-2.0
// memory_growth's detector on synthetic series: a steady ramp is growth; a
// saw-tooth, a one-time step, noise and short histories are not.
#include "diagnosis/memory_trend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>

namespace gpulens::diagnosis {
namespace {

MemoryTrend run(const std::function<double(double)>& mib, double seconds,
                std::optional<double> total = 81559) {
  MemoryTrendTracker tracker;
  for (double t = 0; t <= seconds; t += 1) tracker.add(t, mib(t));
  return tracker.analyze(total);
}

TEST(MemoryTrend, SteadyRampIsGrowthWithAForecast) {
  const auto tr = run([](double t) { return 10000 + 10 * t; }, 300);
  EXPECT_TRUE(tr.growing) << tr.why_not;
  EXPECT_NEAR(tr.slope_mib_s, 10, 0.1);
  EXPECT_GT(tr.r2, 0.99);
  ASSERT_TRUE(tr.time_to_oom_s.has_value());
  EXPECT_NEAR(*tr.time_to_oom_s, (81559 - 13000) / 10.0, 60);
}

TEST(MemoryTrend, ChunkyLeakIsStillGrowth) {
  // The caching allocator grows in 20 MiB segments every few seconds.
  const auto tr = run([](double t) { return 8000 + 20 * std::floor(t / 3); }, 300);
  EXPECT_TRUE(tr.growing) << tr.why_not;
}

TEST(MemoryTrend, GrowthAfterALongFlatStretchIsSeenFromItsOnset) {
  // Eight flat minutes, then a leak: judged on the leak, not the average.
  const auto tr = run([](double t) { return t < 480 ? 6000 : 6000 + 15 * (t - 480); }, 570);
  EXPECT_TRUE(tr.growing) << tr.why_not;
  EXPECT_NEAR(tr.slope_mib_s, 15, 1);
}

TEST(MemoryTrend, LeakAfterOtherProcessesCameAndWentIsGrowth) {
  // A job held 2.5 GB and exited; a new one starts and leaks 256 MiB a second.
  const auto tr = run(
      [](double t) {
        if (t < 200) return 3000.0;
        if (t < 400) return 500.0;
        return 1000.0 + 256 * (t - 400);
      },
      470);
  EXPECT_TRUE(tr.growing) << tr.why_not;
  ASSERT_TRUE(tr.time_to_oom_s.has_value());
}

TEST(MemoryTrend, SawToothIsNotGrowth) {
  const auto tr = run([](double t) { return 10000 + 200 * std::fmod(t, 30.0); }, 600);
  EXPECT_FALSE(tr.growing);
}

TEST(MemoryTrend, SlowSawToothAcrossBucketsIsNotGrowth) {
  // Rises for two minutes, frees, rises again: each rise looks steady alone.
  const auto tr = run([](double t) { return 10000 + 50 * std::fmod(t, 150.0); }, 600);
  EXPECT_FALSE(tr.growing);
}

TEST(MemoryTrend, OneTimeAllocationIsNotGrowth) {
  const auto tr = run([](double t) { return t < 120 ? 2000 : 42000; }, 600);
  EXPECT_FALSE(tr.growing);
  const auto loading = run([](double t) { return t < 20 ? 2000 + 1000 * t : 22000; }, 600);
  EXPECT_FALSE(loading.growing) << loading.why_not;
}

TEST(MemoryTrend, FlatNoiseIsNotGrowth) {
  const auto tr = run([](double t) { return 10000 + 30 * std::sin(t * 0.7); }, 600);
  EXPECT_FALSE(tr.growing);
}

TEST(MemoryTrend, NeedsEnoughHistory) {
  const auto tr = run([](double t) { return 10000 + 50 * t; }, 40);
  EXPECT_FALSE(tr.growing);
  EXPECT_NE(tr.why_not.find("shorter"), std::string::npos) << tr.why_not;
}

// The fast path, as the engine drives it: a reading every `dt` seconds, the
// trend analysed again whenever add() says it may have changed. Returns the time
// of the first forecast of growth, if any.
constexpr double kGiB = 1024;
constexpr double kH200Mib = 140.4 * kGiB;

std::optional<double> first_forecast(const std::function<double(double)>& mib, double seconds,
                                     double dt, double total = kH200Mib,
                                     MemoryTrend* fired = nullptr) {
  MemoryTrendTracker tracker;
  for (double t = 0; t <= seconds; t += dt) {
    if (!tracker.add(t, mib(t))) continue;
    const MemoryTrend tr = tracker.analyze(total);
    if (tr.growing) {
      if (fired != nullptr) *fired = tr;
      return t;
    }
  }
  return std::nullopt;
}

TEST(MemoryTrend, AFastLeakIsForecastAtLeastFiveSecondsBeforeTheDeviceFills) {
  // 8 GiB a second after half a minute of steps at a model's footprint; the job
  // dies when a 4 GiB request no longer fits (136.6 of 140.4 GiB in use).
  for (const double base : {0.0, 15 * kGiB, 40 * kGiB}) {
    for (const double dt : {1.0, 0.5}) {
      const auto mib = [base](double t) { return t < 30 ? base : base + 8 * kGiB * (t - 30); };
      const double death = 30 + (136.6 * kGiB - base) / (8 * kGiB);
      MemoryTrend fired;
      const auto at = first_forecast(mib, death, dt, kH200Mib, &fired);
      ASSERT_TRUE(at) << "base " << base << " dt " << dt;
      EXPECT_LE(*at, death - 5) << "base " << base << " dt " << dt;
      EXPECT_TRUE(fired.fast);
      // One peak a second: the fit is near the true rate, the forecast near the truth.
      EXPECT_NEAR(fired.slope_mib_s, 8 * kGiB, 0.1 * 8 * kGiB);
      ASSERT_TRUE(fired.time_to_oom_s);
      EXPECT_NEAR(*fired.time_to_oom_s, (kH200Mib - mib(*at)) / (8 * kGiB), 1.0);
    }
  }
}

TEST(MemoryTrend, AFastLeakInStepsOfAFewGibIsForecastToo) {
  // 8 GiB a second kept as 4 GiB every 0.5 s, 8 GiB every second or 16 GiB every
  // two, read every 0.1 s (as the corpus was recorded) or every second.
  for (const double every : {0.5, 1.0, 2.0}) {
    for (const double dt : {0.1, 1.0}) {
      const auto mib = [every](double t) {
        return t < 30 ? 15 * kGiB : 15 * kGiB + 8 * kGiB * every * std::floor((t - 30) / every);
      };
      const double death = 30 + (136.6 - 15) / 8;
      const auto at = first_forecast(mib, death, dt);
      ASSERT_TRUE(at) << "every " << every << " dt " << dt;
      EXPECT_LE(*at, death - 5) << "every " << every << " dt " << dt;
    }
  }
}

TEST(MemoryTrend, ASlowLeakIsStillTheSlowPaths) {
  MemoryTrend fired;
  const auto at =
      first_forecast([](double t) { return 20 * kGiB + 10 * t; }, 600, 1.0, kH200Mib, &fired);
  ASSERT_TRUE(at);
  EXPECT_FALSE(fired.fast);
  EXPECT_GE(*at, 60);  // the slow path's minute of history
  EXPECT_NEAR(fired.slope_mib_s, 10, 0.1);
}

TEST(MemoryTrend, AStepsRiseAndFallIsNeverForecast) {
  // Each training step allocates 20 GiB of activations and frees them: a saw-tooth
  // of 1 to 2 s teeth, sampled faster and slower than it moves.
  for (const double period : {1.0, 1.5, 2.0}) {
    for (const double dt : {0.1, 0.25, 0.5, 1.0}) {
      const auto saw = [period](double t) {
        return 60 * kGiB + 20 * kGiB * std::fmod(t, period) / period;
      };
      EXPECT_FALSE(first_forecast(saw, 600, dt)) << "period " << period << " dt " << dt;
      // Rising within the step and falling back at its end, as a hump.
      const auto hump = [period](double t) {
        return 60 * kGiB + 20 * kGiB * std::sin(3.14159265 * std::fmod(t, period) / period);
      };
      EXPECT_FALSE(first_forecast(hump, 600, dt)) << "period " << period << " dt " << dt;
    }
  }
}

TEST(MemoryTrend, OneLargeAllocationThenAPlateauIsNotForecast) {
  // 90 GiB at once (a model moved to the GPU, a cache reserved), in one reading or two.
  EXPECT_FALSE(first_forecast([](double t) { return t < 20 ? 10 * kGiB : 100 * kGiB; }, 600, 1));
  EXPECT_FALSE(first_forecast(
      [](double t) { return t < 20   ? 10 * kGiB
                            : t < 21 ? 55 * kGiB
                                     : 100 * kGiB; }, 600, 1));
  EXPECT_FALSE(first_forecast([](double t) { return t < 20 ? 10 * kGiB : 135 * kGiB; }, 600, 0.5));
}

TEST(MemoryTrend, NoFastForecastWithoutTheDevicesSize) {
  const auto leak = [](double t) { return 8 * kGiB * t; };
  MemoryTrendTracker tracker;
  for (double t = 0; t <= 10; t += 1) tracker.add(t, leak(t));
  const auto tr = tracker.analyze(std::nullopt);
  EXPECT_FALSE(tr.growing);
}

TEST(MemoryTrend, FarAwayOutOfMemoryIsNotUrgent) {
  // 0.5 MiB/s on 80 GB from 10 GB: about 39 hours.
  const auto tr = run([](double t) { return 10000 + 0.5 * t; }, 600);
  EXPECT_FALSE(tr.growing);
}

}  // namespace
}  // namespace gpulens::diagnosis

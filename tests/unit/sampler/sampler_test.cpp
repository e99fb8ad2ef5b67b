// SPDX-License-Identifier: Apache-2.0
#include "sampler/sampler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace gpulens::sampler {
namespace {

// A collector whose device 1 can be made to hang inside sample(), as a driver call can.
class FakeCollector final : public sources::GpuCollector {
 public:
  FakeCollector() {
    devices_.resize(2);
    devices_[0].index = 0;
    devices_[1].index = 1;
  }
  std::string driver_version() const override { return "fake"; }
  const std::vector<DeviceInfo>& devices() const override { return devices_; }
  void sample(std::size_t slot, Sample& out, sources::CollectCost& cost) override {
    const int now_inside = ++inside;
    for (int seen = max_inside.load(); now_inside > seen;) {
      if (max_inside.compare_exchange_weak(seen, now_inside)) break;
    }
    if (static_cast<int>(slot) == hang_slot.load() && hang.load()) {
      while (hang.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (answer_ms.load() > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(answer_ms.load()));
    --inside;
    out.values.set(Metric::GpuUtil, static_cast<double>(slot) * 10);
    if (glitch.load()) out.values.set(Metric::SmActive, 1e308);
    out.procs = std::vector<ProcessSample>{};
    cost.classic_s += 1e-6;
    ++calls[slot];
  }
  std::vector<sources::DeviceEvent> poll_events() override {
    std::vector<sources::DeviceEvent> events;
    if (!xid_sent.exchange(true)) events.push_back({sources::DeviceEvent::Kind::Xid, 0, 1, 79, ""});
    return events;
  }
  std::atomic<bool> hang{false};
  std::atomic<int> hang_slot{1};
  std::atomic<int> answer_ms{0};    // how long a device takes to answer
  std::atomic<int> inside{0};       // calls inside sample() now ...
  std::atomic<int> max_inside{0};   // ... and the most at any time
  std::atomic<bool> glitch{false};  // SM activity read as 1e308
  std::atomic<bool> xid_sent{false};
  std::atomic<int> calls[2] = {0, 0};

 private:
  std::vector<DeviceInfo> devices_;
};

TEST(Sampler, HungDeviceDoesNotFreezeTheOthers) {
  auto fake = std::make_shared<FakeCollector>();
  SamplerOptions options;
  options.interval_s = 0.1;
  Sampler sampler(fake, options);
  auto first = sampler.next();
  ASSERT_TRUE(first && first->has_value());
  ASSERT_EQ((*first)->samples.size(), 2u);
  ASSERT_EQ((*first)->marks.size(), 1u);
  EXPECT_EQ((*first)->marks[0].name, "xid");
  EXPECT_EQ((*first)->marks[0].fields["xid"], 79);

  fake->hang = true;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto tick = sampler.next();
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(tick && tick->has_value());
    // The device hangs for ever: 5 s tells "not held" from "held" on a loaded machine.
    EXPECT_LT(took, 5.0) << "a hung device must not hold the tick";
    ASSERT_EQ((*tick)->samples.size(), 2u);
    EXPECT_EQ((*tick)->samples[0].get(Metric::GpuUtil), 0.0) << "device 0 keeps sampling";
    EXPECT_TRUE((*tick)->samples[1].extra.contains("x_error"));
    EXPECT_FALSE((*tick)->samples[1].get(Metric::GpuUtil).has_value())
        << "no device reading for the hung GPU (host CPU is still attached)";
  }
  EXPECT_EQ(sampler.stats()->timeouts, 3u);
  fake->hang = false;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  auto recovered = sampler.next();
  ASSERT_TRUE(recovered && recovered->has_value());
  // The stuck call's late result is taken, or a fresh one; either way the device is back.
  auto again = sampler.next();
  EXPECT_EQ((*again)->samples[1].get(Metric::GpuUtil), 10.0);
}

// The driver serialises GPM's calls across GPUs, so asking them all at once only
// adds threads waiting on its lock: they are asked in turn.
TEST(Sampler, DevicesAreAskedInTurn) {
  auto fake = std::make_shared<FakeCollector>();
  fake->answer_ms = 2;
  SamplerOptions options;
  // Each GPU's turn is half of 0.45 s: far beyond a 2-ms answer on a loaded machine.
  options.interval_s = 0.5;
  Sampler sampler(fake, options);
  for (int i = 0; i < 3; ++i) {
    auto tick = sampler.next();
    ASSERT_TRUE(tick && tick->has_value());
    ASSERT_EQ((*tick)->samples.size(), 2u);
    EXPECT_EQ((*tick)->samples[1].get(Metric::GpuUtil), 10.0);
  }
  EXPECT_EQ(fake->max_inside.load(), 1) << "no two GPUs are asked at once";
}

// A GPU stuck in the driver holds the ones after it for its turn only.
TEST(Sampler, AHungFirstDeviceDoesNotStarveTheNext) {
  auto fake = std::make_shared<FakeCollector>();
  fake->hang_slot = 0;
  SamplerOptions options;
  options.interval_s = 0.1;
  // Long enough that the next GPU's answer, asked after the first one's turn
  // (half of it), comes in time even on a loaded machine.
  options.gpu_timeout_s = 1.0;
  Sampler sampler(fake, options);
  ASSERT_TRUE(sampler.next());
  fake->hang = true;
  for (int i = 0; i < 2; ++i) {
    auto tick = sampler.next();
    ASSERT_TRUE(tick && tick->has_value());
    ASSERT_EQ((*tick)->samples.size(), 2u);
    EXPECT_TRUE((*tick)->samples[0].extra.contains("x_error"));
    EXPECT_EQ((*tick)->samples[1].get(Metric::GpuUtil), 10.0) << "device 1 keeps sampling";
  }
  fake->hang = false;
}

// A driver's glitch is dropped before anything sees it, and counted (issue 31).
TEST(Sampler, AReadingOutOfRangeIsDroppedAndCounted) {
  auto fake = std::make_shared<FakeCollector>();
  fake->glitch = true;
  SamplerOptions options;
  options.interval_s = 0.1;
  Sampler sampler(fake, options);
  EXPECT_TRUE(sampler.warnings().empty());
  auto tick = sampler.next();
  ASSERT_TRUE(tick && tick->has_value());
  ASSERT_EQ((*tick)->samples.size(), 2u);
  for (const auto& s : (*tick)->samples) {
    EXPECT_FALSE(s.get(Metric::SmActive).has_value());
    EXPECT_TRUE(s.get(Metric::GpuUtil).has_value()) << "the sample's other readings stay";
  }
  EXPECT_EQ(sampler.stats()->out_of_range, 2u);
  ASSERT_EQ(sampler.warnings().size(), 1u);
  EXPECT_EQ(sampler.warnings()[0],
            "2 reading(s) from the driver out of range dropped (the ranges are in "
            "docs/trace-format.md)");
}

TEST(Sampler, TicksStayOnTheirGrid) {
  auto fake = std::make_shared<FakeCollector>();
  SamplerOptions options;
  options.interval_s = 0.1;
  Sampler sampler(fake, options);
  std::vector<double> times;
  for (int i = 0; i < 6; ++i) {
    auto tick = sampler.next();
    ASSERT_TRUE(tick && tick->has_value());
    times.push_back((*tick)->t);
    // Uneven consumer delays must not accumulate into drift.
    std::this_thread::sleep_for(std::chrono::milliseconds(i % 2 == 0 ? 60 : 5));
  }
  // On the grid the span is five slots, plus any slot a loaded machine made the
  // sampler skip (counted, never silently shifted). Drift from the consumer's
  // delays would add about 0.19 s; the 0.09 s tolerance stays below that while a
  // late reading of the clock on a busy machine does not fail the test.
  const auto stats = sampler.stats();
  ASSERT_TRUE(stats);
  const double slots = 5.0 + static_cast<double>(stats->missed_ticks);
  EXPECT_NEAR(times.back() - times.front(), 0.1 * slots, 0.09);
  EXPECT_TRUE(sampler.header().devices.size() == 2);
}

TEST(Sampler, StopEndsABlockedNext) {
  auto fake = std::make_shared<FakeCollector>();
  SamplerOptions options;
  options.interval_s = 3600;  // next() would block for an hour
  Sampler sampler(fake, options);
  ASSERT_TRUE(sampler.next());  // the first tick is immediate
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    sampler.stop();
  });
  const auto start = std::chrono::steady_clock::now();
  auto tick = sampler.next();
  stopper.join();
  ASSERT_TRUE(tick);
  EXPECT_FALSE(tick->has_value());
  // Far below the hour next() would wait, far above any delay of a loaded machine.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0);
}

}  // namespace
}  // namespace gpulens::sampler

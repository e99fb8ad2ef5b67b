// SPDX-License-Identifier: Apache-2.0
// XID events through one NVML event set (src/sources/nvml/nvml_events.cpp):
// polled through the collector, and the watcher on its own for what it skips
// and how many events one poll takes.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "nvml_fake.hpp"
#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources {
namespace {

using namespace gpulens::testing;  // the NVML fake

TEST_F(NvmlCollectorTest, XidEventsArePolled) {
  auto c = open();
  fake.events.push_back({fake.handle(1), nvml::kEventTypeXidCriticalError, 79, 0, 0});
  auto events = c->poll_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, DeviceEvent::Kind::Xid);
  EXPECT_EQ(events[0].gpu, 1);
  EXPECT_EQ(events[0].xid, 79);
  EXPECT_NE(events[0].detail.find("fallen off the bus"), std::string::npos);
  EXPECT_TRUE(c->poll_events().empty());

  // Polled at most about once a second: a 10 Hz sampler finds the next XID a moment
  // later, not never.
  fake.events.push_back({fake.handle(0), nvml::kEventTypeXidCriticalError, 48, 0, 0});
  fake.advance(0.5);
  EXPECT_TRUE(c->poll_events().empty());
  fake.advance(0.5);
  events = c->poll_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].xid, 48);
}

TEST_F(NvmlCollectorTest, WithoutTheEventApiXidsAreNotWatchedAndThatIsSaid) {
  fake.hidden = {"nvmlEventSetWait_v2"};
  api = std::move(load_nvml_api(fake.lookup())).value();
  auto c = open();
  ASSERT_TRUE(c);
  for (const DeviceInfo& d : c->devices()) {
    EXPECT_EQ(d.extra.value("x_xid_events", ""), "n/a: no NVML event API");
  }
  fake.events.push_back({fake.handle(1), nvml::kEventTypeXidCriticalError, 79, 0, 0});
  fake.advance(2.0);
  EXPECT_TRUE(c->poll_events().empty());
  EXPECT_EQ(fake.count("nvmlEventSetCreate"), 0);
}

// The watcher without the collector: GPU 1's slot only, so GPU 0's events come
// from a device it does not know.
class XidWatcherTest : public NvmlCollectorTest {
 protected:
  void SetUp() override {
    NvmlCollectorTest::SetUp();
    auto& slot = slots.emplace_back(std::make_unique<nvml_detail::DeviceSlot>());
    slot->handle = fake.handle(1);
    slot->info.index = 1;
    watcher.open(api, slots);
  }
  void TearDown() override { watcher.close(api); }

  std::vector<std::unique_ptr<nvml_detail::DeviceSlot>> slots;
  nvml_detail::XidWatcher watcher;
};

TEST_F(XidWatcherTest, OtherEventsAndUnknownDevicesAreSkipped) {
  EXPECT_EQ(fake.count("nvmlDeviceRegisterEvents", 1), 1);
  fake.events.push_back({fake.handle(1), 0, 79, 0, 0});  // not an XID event
  fake.events.push_back({fake.handle(0), nvml::kEventTypeXidCriticalError, 48, 0, 0});
  fake.events.push_back({fake.handle(1), nvml::kEventTypeXidCriticalError, 99999, 0, 0});
  std::vector<DeviceEvent> out;
  watcher.poll(api, slots, 1.8e9, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gpu, 1);
  EXPECT_EQ(out[0].t, 1.8e9);
  EXPECT_EQ(out[0].xid, 99999);
  EXPECT_EQ(out[0].detail, "XID 99999: see NVIDIA's XID catalog");
  EXPECT_TRUE(fake.events.empty());
}

// A storm of events cannot hold the sampler's thread: at most 64 a poll, the
// rest at the next.
TEST_F(XidWatcherTest, OnePollTakesAtMost64Events) {
  for (int i = 0; i < 70; ++i) {
    fake.events.push_back({fake.handle(1), nvml::kEventTypeXidCriticalError, 79, 0, 0});
  }
  std::vector<DeviceEvent> out;
  watcher.poll(api, slots, 0, out);
  EXPECT_EQ(out.size(), 64u);
  EXPECT_EQ(fake.events.size(), 6u);
  out.clear();
  watcher.poll(api, slots, 0, out);
  EXPECT_EQ(out.size(), 6u);
}

TEST_F(XidWatcherTest, ClosedWatcherFreesItsSetOnceAndPollsNothing) {
  watcher.close(api);
  EXPECT_EQ(fake.count("nvmlEventSetFree"), 1);
  fake.events.push_back({fake.handle(1), nvml::kEventTypeXidCriticalError, 79, 0, 0});
  std::vector<DeviceEvent> out;
  watcher.poll(api, slots, 0, out);
  EXPECT_TRUE(out.empty());
  watcher.close(api);
  EXPECT_EQ(fake.count("nvmlEventSetFree"), 1);
}

}  // namespace
}  // namespace gpulens::sources

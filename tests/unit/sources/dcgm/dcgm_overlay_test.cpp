// SPDX-License-Identifier: Apache-2.0
#include "sources/dcgm/dcgm_overlay.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/json_format.hpp"
#include "core/trace_reader.hpp"
#include "dcgm_fake.hpp"
#include "sources/dcgm/dcgm_fields.hpp"

namespace gpulens::sources {
namespace {

// GPU 0 has GPM (an H100), GPU 1 lacks it (an A100): what the NVML collector says.
class TwoGpuCollector final : public GpuCollector {
 public:
  explicit TwoGpuCollector(bool second_lacks_gpm = true) {
    DeviceInfo h100;
    h100.index = 0;
    h100.uuid = "GPU-h100";
    DeviceInfo a100;
    a100.index = 1;
    a100.uuid = "GPU-a100";
    if (second_lacks_gpm) {
      for (const auto& m : dcgm::kFieldMappings) {
        a100.unsupported.push_back({m.metric, "n/a: GPM needs Hopper or newer"});
      }
      a100.unsupported.push_back({Metric::HmmaActive, "n/a: GPM needs Hopper or newer"});
    }
    infos_ = {h100, a100};
  }
  std::string driver_version() const override { return "550.0"; }
  const std::vector<DeviceInfo>& devices() const override { return infos_; }
  void sample(std::size_t slot, Sample& out, CollectCost&) override {
    out.values.set(Metric::GpuUtil, 90);
    if (slot == 0) out.values.set(Metric::SmActive, 61);  // GPM's own reading
  }
  std::vector<DeviceEvent> poll_events() override { return {}; }

 private:
  std::vector<DeviceInfo> infos_;
};

class DcgmOverlayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake.add_gpu("GPU-a100");
    fake.add_gpu("GPU-h100");
    options.api = &fake.api();
    options.poll_period_s = 3600;  // the first poll (at open) is the one read here
  }
  testing::FakeDcgm fake;
  DcgmOptions options;
};

const Unsupported* find_reason(const DeviceInfo& d, Metric m) {
  for (const auto& u : d.unsupported) {
    if (u.metric == m) return &u;
  }
  return nullptr;
}

TEST_F(DcgmOverlayTest, FillsOnlyTheGpuWithoutGpmAndMarksTheSample) {
  const double now = unix_now();
  fake.set_double(0, dcgm::kFieldSmActive, 0.42, now);
  fake.set_int64(0, dcgm::kFieldPcieRxBytes, 5 * 1048576, now);
  fake.set_double(1, dcgm::kFieldSmActive, 0.99, now);  // the H100's: never read
  auto collector = with_dcgm(std::make_unique<TwoGpuCollector>(), options);
  ASSERT_TRUE(collector->profiler_status().has_value());
  EXPECT_EQ(collector->profiler_status()->state, "watching");
  EXPECT_EQ(collector->profiler_status()->gpus, std::vector<int>{1});

  CollectCost cost;
  Sample h100;
  collector->sample(0, h100, cost);
  EXPECT_DOUBLE_EQ(h100.values.value_or(Metric::SmActive, -1), 61);
  EXPECT_FALSE(h100.extra.contains(kProfSourceKey));

  Sample a100;
  collector->sample(1, a100, cost);
  EXPECT_DOUBLE_EQ(a100.values.value_or(Metric::SmActive, -1), 42);
  EXPECT_DOUBLE_EQ(a100.values.value_or(Metric::PcieRxMibs, -1), 5);
  EXPECT_DOUBLE_EQ(a100.values.value_or(Metric::GpuUtil, -1), 90);
  EXPECT_EQ(a100.extra.value(kProfSourceKey, ""), "dcgm");

  // The header: DCGM's metrics are no longer "unsupported" on the A100; GPM's own
  // (HMMA) still is; the H100 is untouched.
  const auto& devices = collector->devices();
  EXPECT_EQ(find_reason(devices[1], Metric::SmActive), nullptr);
  EXPECT_NE(find_reason(devices[1], Metric::HmmaActive), nullptr);
  EXPECT_EQ(devices[1].extra.value(kProfSourceKey, ""), "dcgm");
  EXPECT_EQ(devices[1].extra.value("x_dcgm", ""), "watching");
  EXPECT_FALSE(devices[0].extra.contains("x_dcgm"));
}

TEST_F(DcgmOverlayTest, ASampleReadWithoutDcgmValuesLosesTheMarker) {
  auto collector = with_dcgm(std::make_unique<TwoGpuCollector>(), options);
  CollectCost cost;
  Sample reused;
  reused.extra[kProfSourceKey] = "dcgm";  // from an earlier tick
  collector->sample(1, reused, cost);
  EXPECT_FALSE(reused.values.has(Metric::SmActive));
  EXPECT_FALSE(reused.extra.contains(kProfSourceKey));
}

TEST_F(DcgmOverlayTest, RefusalIsAddedToTheDevicesReasons) {
  fake.push_watch_result(-34);  // DCGM_ST_IN_USE
  auto collector = with_dcgm(std::make_unique<TwoGpuCollector>(), options);
  const auto* why = find_reason(collector->devices()[1], Metric::SmActive);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(why->reason.find("GPM needs Hopper"), std::string::npos);
  EXPECT_NE(why->reason.find("DCGM: another profiler holds"), std::string::npos) << why->reason;
  EXPECT_EQ(collector->profiler_status()->state, "unavailable");
}

TEST_F(DcgmOverlayTest, OffOrEveryGpuWithGpmLoadsNothing) {
  auto all_gpm = with_dcgm(std::make_unique<TwoGpuCollector>(false), options);
  EXPECT_FALSE(all_gpm->profiler_status().has_value());
  EXPECT_FALSE(fake.initialized());
  options.mode = DcgmOptions::Mode::Off;
  auto off = with_dcgm(std::make_unique<TwoGpuCollector>(), options);
  EXPECT_FALSE(off->profiler_status().has_value());
  EXPECT_FALSE(fake.initialized());
  EXPECT_EQ(fake.connects(), 0);
}

TEST_F(DcgmOverlayTest, TheMarkerSurvivesATraceRoundTrip) {
  const double now = unix_now();
  fake.set_double(0, dcgm::kFieldTensorActive, 0.125, now);
  auto collector = with_dcgm(std::make_unique<TwoGpuCollector>(), options);
  CollectCost cost;
  Sample s;
  s.t = now;
  s.gpu = 1;
  collector->sample(1, s, cost);
  std::string line;
  append_sample_json(line, s);
  EXPECT_NE(line.find("\"x_prof_source\": \"dcgm\""), std::string::npos) << line;
  auto back = sample_from_json(nlohmann::json::parse(line));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_DOUBLE_EQ(back->values.value_or(Metric::TensorActive, -1), 12.5);
  EXPECT_EQ(back->extra.value(kProfSourceKey, ""), "dcgm");
}

}  // namespace
}  // namespace gpulens::sources

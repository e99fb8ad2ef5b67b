// SPDX-License-Identifier: Apache-2.0
#include "sources/dcgm/dcgm_profiler.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "dcgm_fake.hpp"
#include "sources/dcgm/dcgm_fields.hpp"

namespace gpulens::sources {
namespace {

constexpr int kStInUse = -34;
constexpr int kStRequiresRoot = -29;
constexpr int kStMultiPass = -38;
constexpr int kStVerMismatch = -12;
constexpr int kStNotSupported = -6;

// A host engine whose GPU ids run the other way round from gpulens's indices.
class DcgmProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake.add_gpu("GPU-bbbb");  // DCGM id 0
    fake.add_gpu("GPU-aaaa");  // DCGM id 1
    targets = {{0, "GPU-aaaa"}, {3, "GPU-bbbb"}};
    options.address = "localhost:5555";
    options.unix_s = [this] { return unix_s; };
    options.monotonic_s = [this] { return mono_s; };
  }
  void set_all(unsigned dcgm_gpu, double ratio, std::int64_t bytes_per_s) {
    for (const auto& m : dcgm::kFieldMappings) {
      if (m.conversion == dcgm::Conversion::RatioToPercent) {
        fake.set_double(dcgm_gpu, m.field, ratio, unix_s - 0.5);
      } else {
        fake.set_int64(dcgm_gpu, m.field, bytes_per_s, unix_s - 0.5);
      }
    }
  }

  testing::FakeDcgm fake;
  std::vector<DcgmTarget> targets;
  DcgmOptions options;
  double unix_s = 1'800'000'000.0;
  double mono_s = 100.0;
};

TEST_F(DcgmProfilerTest, WatchesEveryFieldAndReadsThemInGpulensUnitsByUuid) {
  set_all(1, 0.25, 10 * 1048576);  // GPU-aaaa = gpulens 0
  set_all(0, 0.75, 1048576);       // GPU-bbbb = gpulens 3
  DcgmProfiler p(fake.api(), targets, options);
  const ProfilerStatus s = p.status();
  EXPECT_EQ(s.state, "watching") << s.detail;
  EXPECT_EQ(s.sessions, 1u);
  EXPECT_EQ(fake.watched_fields(), static_cast<long long>(dcgm::kFieldMappings.size()));
  EXPECT_EQ(fake.update_us(), 1'000'000);
  EXPECT_EQ(fake.timeout_ms(), 1000);

  const MetricValues g0 = p.latest(0);
  EXPECT_DOUBLE_EQ(g0.value_or(Metric::SmActive, -1), 25.0);
  EXPECT_DOUBLE_EQ(g0.value_or(Metric::Fp16Active, -1), 25.0);
  EXPECT_DOUBLE_EQ(g0.value_or(Metric::PcieTxMibs, -1), 10.0);
  EXPECT_DOUBLE_EQ(g0.value_or(Metric::NvlinkRxMibs, -1), 10.0);
  const MetricValues g3 = p.latest(3);
  EXPECT_DOUBLE_EQ(g3.value_or(Metric::SmOccupancy, -1), 75.0);
  EXPECT_DOUBLE_EQ(g3.value_or(Metric::PcieRxMibs, -1), 1.0);
  EXPECT_TRUE(p.latest(1).empty());  // not a target
  EXPECT_EQ(p.watched(0).size(), dcgm::kFieldMappings.size());
  // Never a metric GPM alone gives.
  EXPECT_FALSE(g0.has(Metric::HmmaActive));
  EXPECT_FALSE(g0.has(Metric::GpuUtil));
}

TEST_F(DcgmProfilerTest, BlankErrorAndStaleValuesAreAbsentAndCounted) {
  set_all(1, 0.5, 0);
  fake.set_double(1, dcgm::kFieldSmActive, 140737488355328.0, unix_s);     // DCGM_FP64_BLANK
  fake.set_int64(1, dcgm::kFieldPcieTxBytes, 0x7ffffffffffffff0, unix_s);  // DCGM_INT64_BLANK
  fake.set_double(1, dcgm::kFieldTensorActive, 0.5, unix_s, kStNotSupported);
  fake.set_double(1, dcgm::kFieldDramActive, 0.5, unix_s - 60);  // a minute old
  DcgmProfiler p(fake.api(), targets, options);
  const MetricValues g0 = p.latest(0);
  EXPECT_FALSE(g0.has(Metric::SmActive));
  EXPECT_FALSE(g0.has(Metric::PcieTxMibs));
  EXPECT_FALSE(g0.has(Metric::TensorActive));
  EXPECT_FALSE(g0.has(Metric::DramActive));
  EXPECT_TRUE(g0.has(Metric::SmOccupancy));
  // Values DCGM never filled for GPU-bbbb are blank too (DCGM_ST_NO_DATA).
  const ProfilerStatus s = p.status();
  EXPECT_EQ(s.stale_values, 1u);
  EXPECT_EQ(s.blank_values, 3u + dcgm::kFieldMappings.size());
  EXPECT_EQ(s.detail, "");  // some values are fresh: nothing to explain
}

TEST_F(DcgmProfilerTest, ARefusalOfEveryValueIsSaidButNotYetSampledIsNot) {
  DcgmProfiler fresh(fake.api(), targets, options);
  EXPECT_EQ(fresh.status().state, "watching");
  EXPECT_EQ(fresh.status().detail, "");  // DCGM_ST_NO_DATA before DCGM's first update

  for (const auto& m : dcgm::kFieldMappings) {
    fake.set_double(0, m.field, 0.5, unix_s, kStInUse);
    fake.set_double(1, m.field, 0.5, unix_s, kStInUse);
  }
  fresh.poll();
  EXPECT_TRUE(fresh.latest(0).empty());
  EXPECT_NE(fresh.status().detail.find("DCGM returns no values: DCGM_ST_IN_USE"), std::string::npos)
      << fresh.status().detail;
}

TEST_F(DcgmProfilerTest, CachedValuesAgeOutWhenNoPollComes) {
  set_all(1, 0.5, 0);
  DcgmProfiler p(fake.api(), targets, options);
  EXPECT_TRUE(p.latest(0).has(Metric::SmActive));
  unix_s += 10;  // a poll thread stuck for 10 s: the 3 s bound has passed
  EXPECT_TRUE(p.latest(0).empty());
}

TEST_F(DcgmProfilerTest, HostEngineGoingAwayMakesReadingsAbsentThenReconnectsWithBackoff) {
  set_all(1, 0.5, 0);
  DcgmProfiler p(fake.api(), targets, options);
  ASSERT_TRUE(p.latest(0).has(Metric::SmActive));

  fake.set_engine_up(false);
  p.poll();
  EXPECT_TRUE(p.latest(0).empty());
  ProfilerStatus s = p.status();
  EXPECT_EQ(s.state, "reconnecting");
  EXPECT_EQ(s.lost, 1u);
  EXPECT_NE(s.detail.find("DCGM_ST_CONNECTION_NOT_VALID"), std::string::npos) << s.detail;

  // Before the backoff (2 s) nothing is tried; after it, a refused attempt doubles it.
  mono_s += 1;
  p.poll();
  EXPECT_EQ(fake.connects(), 1);
  mono_s += 1.5;
  p.poll();
  EXPECT_EQ(p.status().state, "reconnecting");
  EXPECT_NE(p.status().detail.find("no DCGM host engine answers at localhost:5555"),
            std::string::npos);

  fake.set_engine_up(true);
  mono_s += 3;  // within the doubled backoff (4 s)
  p.poll();
  EXPECT_EQ(fake.connects(), 1);
  mono_s += 2;
  set_all(1, 0.5, 0);
  p.poll();
  EXPECT_EQ(fake.connects(), 2);
  s = p.status();
  EXPECT_EQ(s.state, "watching");
  EXPECT_EQ(s.sessions, 2u);
  EXPECT_TRUE(p.latest(0).has(Metric::SmActive));
}

TEST_F(DcgmProfilerTest, MultiPassFallsBackToTheFirstPassFieldsAndSaysWhatIsMissing) {
  set_all(1, 0.5, 1048576);
  fake.push_watch_result(kStMultiPass);
  DcgmProfiler p(fake.api(), targets, options);
  EXPECT_EQ(p.status().state, "watching");
  EXPECT_EQ(fake.watches(), 2);
  EXPECT_EQ(fake.watched_fields(), 4);
  const MetricValues g0 = p.latest(0);
  EXPECT_TRUE(g0.has(Metric::SmActive));
  EXPECT_TRUE(g0.has(Metric::DramActive));
  EXPECT_FALSE(g0.has(Metric::Fp32Active));
  EXPECT_FALSE(g0.has(Metric::PcieTxMibs));
  ASSERT_EQ(p.status().notes.size(), 1u);
  EXPECT_NE(p.status().notes[0].find("DCGM_ST_PROFILING_MULTI_PASS"), std::string::npos);
  EXPECT_NE(p.status().notes[0].find("fp64_active"), std::string::npos);
}

TEST_F(DcgmProfilerTest, AnotherProfilerOrANonRootEngineIsSaidNotGuessed) {
  fake.push_watch_result(kStInUse);
  DcgmProfiler held(fake.api(), targets, options);
  EXPECT_EQ(held.status().state, "unavailable");
  EXPECT_NE(held.status().detail.find("another profiler"), std::string::npos);
  EXPECT_NE(held.status().detail.find("DCGM_ST_IN_USE"), std::string::npos);
  EXPECT_TRUE(held.latest(0).empty());
  EXPECT_TRUE(held.watched(0).empty());

  fake.push_watch_result(kStRequiresRoot);
  DcgmProfiler non_root(fake.api(), targets, options);
  EXPECT_NE(non_root.status().detail.find("runs as root"), std::string::npos);
}

TEST_F(DcgmProfilerTest, VersionMismatchAndUnknownGpusAreSaid) {
  fake.set_connect_result(kStVerMismatch);
  DcgmProfiler mismatch(fake.api(), targets, options);
  EXPECT_NE(mismatch.status().detail.find("different DCGM versions"), std::string::npos);

  fake.set_connect_result(0);
  DcgmProfiler strangers(fake.api(), {{0, "GPU-cccc"}}, options);
  EXPECT_EQ(strangers.status().state, "unavailable");
  EXPECT_NE(strangers.status().detail.find("sees none of the GPUs"), std::string::npos);
}

TEST_F(DcgmProfilerTest, PollThreadReadsWithoutTheCaller) {
  options.poll_period_s = 0.01;
  options.unix_s = nullptr;  // real clocks: the thread runs on its own
  options.monotonic_s = nullptr;
  DcgmProfiler p(fake.api(), targets, options);
  p.start();
  EXPECT_TRUE(p.latest(0).empty());
  const double now = unix_now();
  fake.set_double(1, dcgm::kFieldSmActive, 0.3, now);
  bool seen = false;
  for (int i = 0; i < 500 && !seen; ++i) {
    seen = p.latest(0).has(Metric::SmActive);
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(seen);
}

TEST_F(DcgmProfilerTest, SessionEndsCleanly) {
  {
    DcgmProfiler p(fake.api(), targets, options);
    EXPECT_TRUE(fake.initialized());
  }
  EXPECT_EQ(fake.unwatches(), 1);
  EXPECT_FALSE(fake.initialized());
}

TEST_F(DcgmProfilerTest, EmbeddedEngineIsStartedOnlyWhenAskedAndStopped) {
  set_all(1, 0.5, 0);
  options.mode = DcgmOptions::Mode::Embedded;
  {
    DcgmProfiler p(fake.api(), targets, options);
    EXPECT_EQ(p.status().state, "watching") << p.status().detail;
    EXPECT_EQ(p.status().address, "embedded");
    EXPECT_EQ(fake.embedded_starts(), 1);
    EXPECT_EQ(fake.embedded_mode(), 1);  // DCGM_OPERATION_MODE_AUTO: it samples by itself
    EXPECT_EQ(fake.connects(), 0);
    EXPECT_TRUE(p.latest(0).has(Metric::SmActive));
  }
  EXPECT_EQ(fake.embedded_stops(), 1);

  // A libdcgm without the embedded engine's functions says so.
  DcgmApi without = fake.api();
  without.startEmbedded = nullptr;
  DcgmProfiler p(without, targets, options);
  EXPECT_EQ(p.status().state, "unavailable");
  EXPECT_NE(p.status().detail.find("cannot run an embedded host engine"), std::string::npos);
  EXPECT_EQ(fake.embedded_starts(), 1);
}

TEST_F(DcgmProfilerTest, AutoAndAnAddressNeverStartAnEmbeddedEngine) {
  DcgmProfiler p(fake.api(), targets, options);
  EXPECT_EQ(fake.connects(), 1);
  EXPECT_EQ(fake.embedded_starts(), 0);
}

TEST(DcgmOption, ParsesModesAndAddresses) {
  EXPECT_EQ(parse_dcgm_option("auto")->mode, DcgmOptions::Mode::Auto);
  EXPECT_EQ(parse_dcgm_option("auto")->address, "localhost:5555");
  EXPECT_EQ(parse_dcgm_option("off")->mode, DcgmOptions::Mode::Off);
  EXPECT_EQ(parse_dcgm_option("embedded")->mode, DcgmOptions::Mode::Embedded);
  const auto remote = parse_dcgm_option("10.0.0.7:5556");
  ASSERT_TRUE(remote.ok());
  EXPECT_EQ(remote->mode, DcgmOptions::Mode::Connect);
  EXPECT_EQ(remote->address, "10.0.0.7:5556");
  EXPECT_EQ(parse_dcgm_option("/run/dcgm.sock")->address, "/run/dcgm.sock");
  EXPECT_FALSE(parse_dcgm_option("").ok());
  EXPECT_FALSE(parse_dcgm_option("host name").ok());
}

}  // namespace
}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
// dcgm-exporter's default fields from NVML (nvml_dcgm_fields.cpp) against the fake:
// what is read every tick, what only every link_errors_refresh_s, how the NVLink
// error counters are read a link a tick, which links are read, and the reasons for
// what cannot be.
#include <gtest/gtest.h>

#include <string>

#include "nvml_fake.hpp"

namespace gpulens::sources {
namespace {

using namespace gpulens::testing;  // the NVML fake

std::string reason_of(const DeviceInfo& info, Metric m) {
  const std::string* r = info.unsupported_reason(m);
  return r == nullptr ? "(none)" : *r;
}

TEST_F(NvmlCollectorTest, CodecAndRemappedRowsAreReadEveryTick) {
  auto c = open();
  fake.gpus[0].remapped_correctable = 4;
  fake.gpus[0].remap_failed = 1;
  const int at_open = fake.count("nvmlDeviceGetRemappedRows", 0);
  const Sample s = tick(*c, 0, 0.1);
  EXPECT_EQ(s.get(Metric::EncUtil), 12.0);
  EXPECT_EQ(s.get(Metric::DecUtil), 34.0);
  EXPECT_EQ(s.get(Metric::RemappedRowsCorrectable), 4.0);
  EXPECT_EQ(s.get(Metric::RemappedRowsUncorrectable), 1.0);
  EXPECT_EQ(s.get(Metric::RowRemapFailure), 1.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetRemappedRows", 0), at_open + 1);
  tick(*c, 0, 0.1);
  EXPECT_EQ(fake.count("nvmlDeviceGetRemappedRows", 0), at_open + 2);
  EXPECT_EQ(fake.count("nvmlDeviceGetEncoderUtilization", 0), at_open + 2);
}

TEST_F(NvmlCollectorTest, PcieReplaysAreReadOncePerRefreshAndRepeatedBetween) {
  NvmlOptions options;
  options.link_errors_refresh_s = 30;
  auto c = open(options);
  EXPECT_EQ(fake.count("nvmlDeviceGetPcieReplayCounter", 0), 1);  // the probe's read
  fake.gpus[0].pcie_replays = 9;
  // Ten ticks a second for 29 s (open's GPM probe took 0.1 s more): the count read at
  // open is repeated, no call made.
  Sample s;
  for (int i = 0; i < 290; ++i) s = tick(*c, 0, 0.1);
  EXPECT_EQ(fake.count("nvmlDeviceGetPcieReplayCounter", 0), 1);
  EXPECT_EQ(s.get(Metric::PcieReplays), 5.0);
  s = tick(*c, 0, 1.5);
  EXPECT_EQ(fake.count("nvmlDeviceGetPcieReplayCounter", 0), 2);
  EXPECT_EQ(s.get(Metric::PcieReplays), 9.0);
  // A read that fails keeps the last count (a counter has no gap) and is not tried
  // again at every tick: the call is dear.
  fake.gpus[0].pcie_replay_ret = Return::Unknown;
  s = tick(*c, 0, 31.0);
  EXPECT_EQ(s.get(Metric::PcieReplays), 9.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetPcieReplayCounter", 0), 3);
  tick(*c, 0, 0.1);
  EXPECT_EQ(fake.count("nvmlDeviceGetPcieReplayCounter", 0), 3);
}

TEST_F(NvmlCollectorTest, NvlinkErrorsAreReadOneLinkATickAndSummedOncePassed) {
  fake.gpus[1].nvlinks_active = 4;
  fake.gpus[1].nvlinks_down = {1};  // links 0, 2 and 3 are active
  NvmlOptions options;
  options.nvlink_errors_refresh_s = 300;
  auto c = open(options);
  // The probe read the 4 counters of the first active link only: a whole pass costs
  // ~0.9 ms per link and counter on an H200, too much for one tick.
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter", 1), 4);
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter#1/link0"), 4);
  // No sum until every link has been read: a counter must not climb as links come in.
  Sample s = tick(*c, 1, 1.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter#1/link2"), 4);
  EXPECT_FALSE(s.values.has(Metric::NvlinkReplayErrors));
  s = tick(*c, 1, 1.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter#1/link3"), 4);
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter#1/link1"), 0);  // down: never read
  EXPECT_EQ(s.get(Metric::NvlinkCrcFlitErrors), 3 * 3.0);  // 3 per link (fake's DL_CRC_FLIT)
  EXPECT_EQ(s.get(Metric::NvlinkCrcDataErrors), 3 * 2.0);
  EXPECT_EQ(s.get(Metric::NvlinkReplayErrors), 3 * 7.0);
  EXPECT_EQ(s.get(Metric::NvlinkRecoveryErrors), 3 * 1.0);
  // Between passes the sums repeat and nothing is called.
  fake.gpus[1].nvlink_errors[nvml::kNvlinkErrorDlReplay] = 10;
  for (int i = 0; i < 290; ++i) s = tick(*c, 1, 1.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter", 1), 4 * 3);
  EXPECT_EQ(s.get(Metric::NvlinkReplayErrors), 3 * 7.0);
  // 300 s after the first pass began the next one does, a link a tick again; the sum
  // takes each link's new count as it is read, so it only ever rises.
  s = tick(*c, 1, 10.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter", 1), 4 * 4);
  EXPECT_EQ(s.get(Metric::NvlinkReplayErrors), 10.0 + 2 * 7.0);
  tick(*c, 1, 1.0);
  s = tick(*c, 1, 1.0);
  EXPECT_EQ(s.get(Metric::NvlinkReplayErrors), 3 * 10.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter", 1), 2 * 4 * 3);
  tick(*c, 1, 1.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter", 1), 2 * 4 * 3);
}

TEST_F(NvmlCollectorTest, NvlinkCounterTheGpuRefusesIsAbsentWithItsReason) {
  fake.gpus[1].nvlinks_active = 2;
  fake.gpus[1].nvlink_counter_ret[nvml::kNvlinkErrorDlCrcData] = Return::NotSupported;
  NvmlOptions options;
  options.nvlink_errors_refresh_s = 30;
  auto c = open(options);
  const Sample s = tick(*c, 1, 1.0);  // the second link: the pass is done
  EXPECT_FALSE(s.values.has(Metric::NvlinkCrcDataErrors));
  EXPECT_EQ(s.get(Metric::NvlinkCrcFlitErrors), 2 * 3.0);
  EXPECT_EQ(reason_of(c->devices()[1], Metric::NvlinkCrcDataErrors),
            "n/a: not supported by this GPU");
  // Refused for good: never asked again, on any link.
  const int before = fake.count("nvmlDeviceGetNvLinkErrorCounter", 1);
  EXPECT_EQ(before, 4 + 3);  // the probe asked all 4 on the first link
  tick(*c, 1, 60.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter", 1), before + 3);
}

TEST_F(NvmlCollectorTest, NoActiveNvlinkMeansNoNvlinkCallsAndAReason) {
  auto c = open();  // the H100 of the fixture has no NVLink (NOT_SUPPORTED)
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter", 0), 0);
  const Sample s = tick(*c, 0, 60.0);
  EXPECT_FALSE(s.values.has(Metric::NvlinkReplayErrors));
  EXPECT_EQ(fake.count("nvmlDeviceGetNvLinkErrorCounter", 0), 0);
  EXPECT_EQ(reason_of(c->devices()[0], Metric::NvlinkReplayErrors),
            "n/a: no active NVLink link on this GPU");
}

TEST_F(NvmlCollectorTest, DcgmFieldsADriverLacksAreAbsentWithTheFunctionNamed) {
  for (const char* symbol : {"nvmlDeviceGetEncoderUtilization", "nvmlDeviceGetRemappedRows",
                             "nvmlDeviceGetPcieReplayCounter", "nvmlDeviceGetNvLinkErrorCounter"}) {
    fake.hidden.insert(symbol);
  }
  api = std::move(load_nvml_api(fake.lookup())).value();
  auto c = open();
  const Sample s = tick(*c, 1, 60.0);
  for (Metric m : {Metric::EncUtil, Metric::RemappedRowsCorrectable, Metric::RowRemapFailure,
                   Metric::PcieReplays, Metric::NvlinkCrcFlitErrors}) {
    EXPECT_FALSE(s.values.has(m)) << metric_info(m).key;
  }
  EXPECT_EQ(s.get(Metric::DecUtil), 34.0);  // its own entry point is there
  EXPECT_EQ(reason_of(c->devices()[1], Metric::EncUtil),
            "n/a: this NVIDIA driver lacks nvmlDeviceGetEncoderUtilization");
  EXPECT_EQ(reason_of(c->devices()[1], Metric::RowRemapFailure),
            "n/a: this NVIDIA driver lacks nvmlDeviceGetRemappedRows");
  EXPECT_EQ(reason_of(c->devices()[1], Metric::NvlinkRecoveryErrors),
            "n/a: this NVIDIA driver lacks nvmlDeviceGetNvLinkErrorCounter");
}

TEST_F(NvmlCollectorTest, RemappedRowsTheGpuRefusesAreAbsentAndNotAskedAgain) {
  fake.gpus[1].remapped_ret = Return::NotSupported;  // pre-Ampere boards have no row remapping
  fake.gpus[1].codec_ret = Return::NoPermission;
  auto c = open();
  const Sample s = tick(*c, 1, 1.0);
  EXPECT_FALSE(s.values.has(Metric::RemappedRowsUncorrectable));
  EXPECT_FALSE(s.values.has(Metric::EncUtil));
  EXPECT_EQ(fake.count("nvmlDeviceGetRemappedRows", 1), 1);  // the probe's, only
  EXPECT_EQ(reason_of(c->devices()[1], Metric::RemappedRowsCorrectable),
            "n/a: not supported by this GPU");
  EXPECT_EQ(reason_of(c->devices()[1], Metric::DecUtil),
            "n/a: no permission (nvmlDeviceGetDecoderUtilization returned "
            "NVML_ERROR_NO_PERMISSION)");
}

TEST_F(NvmlCollectorTest, DcgmFieldsSwitchedOffMakeNoCalls) {
  fake.gpus[1].nvlinks_active = 2;
  NvmlOptions options;
  options.dcgm_fields = false;
  auto c = open(options);
  const Sample s = tick(*c, 1, 60.0);
  EXPECT_FALSE(s.values.has(Metric::EncUtil));
  EXPECT_FALSE(s.values.has(Metric::PcieReplays));
  for (const char* f : {"nvmlDeviceGetEncoderUtilization", "nvmlDeviceGetRemappedRows",
                        "nvmlDeviceGetPcieReplayCounter", "nvmlDeviceGetNvLinkErrorCounter"}) {
    EXPECT_EQ(fake.count(f, 1), 0) << f;
  }
  EXPECT_TRUE(s.values.has(Metric::GpuUtil));
}

}  // namespace
}  // namespace gpulens::sources

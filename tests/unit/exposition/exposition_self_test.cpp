// SPDX-License-Identifier: Apache-2.0
// The agent's own series on /metrics: its version and start, the source's ticks
// and end, the last sample's time only once there is one, history written or
// not (a store that is off reads 0, with no store series), HTTP answers by
// handler and code, and the process_* series only where they were read.
#include <gtest/gtest.h>

#include <string>

#include "exposition/exposition.hpp"
#include "server_support.hpp"
#include "store/store_writer.hpp"

namespace gpulens::exposition {
namespace {

bool self_has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ExpositionSelf, TheAgentAndItsSource) {
  auto snap = gpulens::testing::fixed_snapshot();
  snap.source.ticks = 42;
  snap.source.ended = true;
  std::string text;
  render_self_metrics(text, snap, SelfStats{});
  EXPECT_TRUE(
      self_has(text, std::string("gpulens_build_info{version=\"") + GPULENS_VERSION + "\"} 1\n"))
      << text;
  EXPECT_TRUE(self_has(text, "gpulens_agent_start_time_seconds 1732199000\n"));
  EXPECT_TRUE(self_has(text,
                       "# TYPE gpulens_source_ticks_total counter\n"
                       "gpulens_source_ticks_total 42\n"));
  EXPECT_TRUE(self_has(text, "gpulens_source_ended 1\n"));
  EXPECT_TRUE(self_has(text, "gpulens_last_sample_timestamp_seconds 1732200000.5\n"));
  snap.t = 0;  // no sample yet
  text.clear();
  render_self_metrics(text, snap, SelfStats{});
  EXPECT_FALSE(self_has(text, "gpulens_last_sample_timestamp_seconds")) << text;
}

// The sampler's CPU by part: the slow counters (energy, ECC, link errors) apart from
// the per-tick calls, so that a pass over 18 NVLink links shows as what it is.
TEST(ExpositionSelf, SamplerCpuBySlowAndPerTickParts) {
  auto snap = gpulens::testing::fixed_snapshot();
  sources::SamplerStats stats;
  stats.cost.classic_s = 1.25;
  stats.cost.slow_s = 0.5;
  stats.cost.gpm_s = 2;
  snap.source.sampler = stats;
  std::string text;
  render_self_metrics(text, snap, SelfStats{});
  EXPECT_TRUE(self_has(text, "gpulens_sampler_cpu_seconds_total{part=\"classic\"} 1.25\n")) << text;
  EXPECT_TRUE(self_has(text, "gpulens_sampler_cpu_seconds_total{part=\"slow\"} 0.5\n"));
  EXPECT_TRUE(self_has(text, "gpulens_sampler_cpu_seconds_total{part=\"gpm\"} 2\n"));
  EXPECT_EQ(stats.cost.total_s(), 3.75);
}

TEST(ExpositionSelf, HistoryOffReadsDownWithoutItsSeries) {
  const auto snap = gpulens::testing::fixed_snapshot();
  std::string off;
  render_self_metrics(off, snap, SelfStats{});
  EXPECT_TRUE(self_has(off, "gpulens_store_up 0\n"));
  EXPECT_FALSE(self_has(off, "gpulens_store_size_bytes"));
  SelfStats self;
  store::StoreStatus st;
  st.healthy = true;
  st.stats.file_bytes = 4096;
  st.samples_written = 1000;
  st.write_errors = 2;
  st.dropped_samples = 3;
  st.last_commit_s = 0.25;
  self.store = st;
  std::string on;
  render_self_metrics(on, snap, self);
  EXPECT_TRUE(self_has(on, "gpulens_store_up 1\n"));
  EXPECT_TRUE(self_has(on, "gpulens_store_size_bytes 4096\n"));
  EXPECT_TRUE(self_has(on, "gpulens_store_samples_written_total 1000\n"));
  EXPECT_TRUE(self_has(on, "gpulens_store_write_errors_total 2\n"));
  EXPECT_TRUE(self_has(on, "gpulens_store_dropped_samples_total 3\n"));
  EXPECT_TRUE(self_has(on, "gpulens_store_commit_duration_seconds 0.25\n"));
  self.store->healthy = false;
  on.clear();
  render_self_metrics(on, snap, self);
  EXPECT_TRUE(self_has(on, "gpulens_store_up 0\n")) << "open but failing reads down";
}

TEST(ExpositionSelf, HttpAnswersAndTheProcessWhereRead) {
  const auto snap = gpulens::testing::fixed_snapshot();
  SelfStats self;
  self.last_scrape_s = 0.003;
  self.http = {{"/metrics", 200, 10}, {"/api/v1/history", 400, 1}};
  std::string text;
  render_self_metrics(text, snap, self);
  EXPECT_TRUE(self_has(text, "gpulens_scrape_duration_seconds 0.003\n"));
  EXPECT_TRUE(
      self_has(text, "gpulens_http_requests_total{handler=\"/metrics\",code=\"200\"} 10\n"));
  EXPECT_TRUE(
      self_has(text, "gpulens_http_requests_total{handler=\"/api/v1/history\",code=\"400\"} 1\n"));
  EXPECT_FALSE(self_has(text, "process_")) << "nothing read: no process_* series";
  self.cpu_seconds = 12.5;
  self.rss_bytes = 1048576;
  self.start_time = 1732199000;
  text.clear();
  render_self_metrics(text, snap, self);
  EXPECT_TRUE(self_has(text, "process_cpu_seconds_total 12.5\n"));
  EXPECT_TRUE(self_has(text, "process_resident_memory_bytes 1048576\n"));
  EXPECT_TRUE(self_has(text, "process_start_time_seconds 1732199000\n"));
}

}  // namespace
}  // namespace gpulens::exposition

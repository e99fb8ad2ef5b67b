// SPDX-License-Identifier: Apache-2.0
#include "exposition/exposition.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "cli_support.hpp"
#include "exposition/prom_writer.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

using gpulens::testing::fixed_snapshot;

SelfStats fixed_self() {
  SelfStats s;
  s.http = {{"/metrics", 200, 3}};
  s.last_scrape_s = 0.00025;
  store::StoreStatus st;
  st.healthy = true;
  st.samples_written = 10;
  st.stats.file_bytes = 4096;
  s.store = st;
  return s;
}

std::string render(bool dcgm, bool procs) {
  ExpositionOptions o;
  o.dcgm = dcgm;
  o.process_metrics = procs;
  return render_metrics(fixed_snapshot(), o, fixed_self());
}

using gpulens::testing::promtool;

TEST(Exposition, NativeMatchesGolden) {
  gpulens::testing::expect_golden("metrics-native.prom", render(false, true));
}

TEST(Exposition, DcgmMatchesGolden) {
  ExpositionOptions o;
  o.native = false;
  o.dcgm = true;
  std::string out;
  render_dcgm_metrics(out, fixed_snapshot());
  gpulens::testing::expect_golden("metrics-dcgm.prom", out);
}

TEST(Exposition, UnitsAreBaseUnits) {
  const auto text = render(false, false);
  // 0.8 % SM activity is a ratio of 0.008; 54,800 MiB/s is bytes per second.
  EXPECT_NE(text.find("gpulens_sm_active_ratio{gpu=\"0\",uuid=\"GPU-00000000\",model=\"NVIDIA "
                      "H100 80GB HBM3\",hostname=\"node-17\"} 0.008\n"),
            std::string::npos);
  EXPECT_NE(text.find("direction=\"rx\"} 57461964800\n"), std::string::npos);
  EXPECT_NE(text.find("gpulens_energy_joules_total{gpu=\"0\""), std::string::npos);
  EXPECT_NE(text.find("} 137317.533\n"), std::string::npos);
  EXPECT_NE(text.find("gpulens_sm_clock_hertz{gpu=\"1\""), std::string::npos);
  EXPECT_NE(text.find("} 1365000000\n"), std::string::npos);
}

TEST(Exposition, UnmeasuredMetricHasNoSeries) {
  const auto text = render(false, false);
  EXPECT_NE(text.find("gpulens_memory_temperature_celsius{gpu=\"0\""), std::string::npos);
  EXPECT_EQ(text.find("gpulens_memory_temperature_celsius{gpu=\"1\""), std::string::npos);
  // Never measured on any GPU: not even a HELP line.
  EXPECT_EQ(text.find("gpulens_ecc_corrected_errors_total"), std::string::npos);
}

TEST(Exposition, StateAlertsAndEfficiency) {
  const auto text = render(false, false);
  EXPECT_NE(text.find("hostname=\"node-17\",state=\"sm_underused\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("hostname=\"node-17\",state=\"idle\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("gpulens_alert_firing{gpu=\"0\""), std::string::npos);
  EXPECT_NE(text.find("rule=\"high_util_low_activity\",severity=\"warning\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("gpulens_efficiency_ratio{gpu=\"1\""), std::string::npos);
  EXPECT_NE(text.find("} 0.9525\n"), std::string::npos);
}

TEST(Exposition, ProcessSeriesAreOptInAndEscaped) {
  EXPECT_EQ(render(false, false).find("gpulens_process_"), std::string::npos);
  const auto text = render(false, true);
  EXPECT_NE(text.find("process=\"we\\\"ird\\\\na\\nme\""), std::string::npos);
  EXPECT_NE(text.find("container_id=\"abc123\",pod_uid=\"pod-uid-1\",namespace=\"\",pod=\"\""),
            std::string::npos);
  // Command lines may hold secrets: never a label.
  EXPECT_EQ(text.find("SECRET"), std::string::npos);
}

TEST(Exposition, FamiliesAreWrittenOnce) {
  const auto text = render(true, true);
  std::istringstream in(text);
  std::string line;
  std::set<std::string> seen;
  while (std::getline(in, line)) {
    if (!line.starts_with("# TYPE ")) continue;
    const auto name = line.substr(7, line.find(' ', 7) - 7);
    EXPECT_TRUE(seen.insert(name).second) << "family written twice: " << name;
  }
  EXPECT_GT(seen.size(), 40u);
}

TEST(Exposition, PromtoolAcceptsNativeNames) {
  const auto result = promtool(render(false, true));
  if (!result) GTEST_SKIP() << "promtool not installed (Debian: prometheus)";
  EXPECT_EQ(result->first, 0) << result->second;
}

TEST(Exposition, PromtoolSeesOnlyDcgmExportersOwnNamingInCompatMode) {
  const auto result = promtool(render(true, true));
  if (!result) GTEST_SKIP() << "promtool not installed (Debian: prometheus)";
  gpulens::testing::expect_only_dcgm_naming_flagged(result->second);
}

}  // namespace
}  // namespace gpulens::exposition

namespace gpulens::exposition {
namespace {

// The integer pipe has a family of its own (it is not a floating-point
// precision), the DCGM field DCGM_FI_PROF_PIPE_INT_ACTIVE under --compat dcgm,
// and a MIG family like every GPM family; a GPU that did not measure it has no series.
TEST(Exposition, IntegerPipeIsItsOwnFamily) {
  auto snap = gpulens::testing::fixed_snapshot();
  snap.gpus[0].sample->values.set(Metric::IntActive, 63.5);
  snap.gpus[0].sample->extra["x_mig"] =
      nlohmann::json::parse(R"([{"gpu_instance": 3, "int_active": 40}])");
  const std::string gpu0 =
      R"(gpu="0",uuid="GPU-00000000",model="NVIDIA H100 80GB HBM3",hostname="node-17")";
  std::string native;
  render_gpu_metrics(native, snap);
  EXPECT_NE(native.find("# HELP gpulens_int_pipe_active_ratio Share of cycles the non-tensor "
                        "integer pipe was active (GPM)"),
            std::string::npos)
      << native;
  EXPECT_NE(native.find("# TYPE gpulens_int_pipe_active_ratio gauge\n"), std::string::npos);
  EXPECT_NE(native.find(fmt::format("gpulens_int_pipe_active_ratio{{{}}} 0.635\n", gpu0)),
            std::string::npos)
      << native;
  EXPECT_EQ(native.find("gpulens_int_pipe_active_ratio{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(native.find("precision=\"int"), std::string::npos) << "not a floating-point pipe";
  EXPECT_NE(native.find(fmt::format(
                "gpulens_mig_int_pipe_active_ratio{{{},gpu_instance=\"3\"}} 0.4\n", gpu0)),
            std::string::npos)
      << native;

  std::string dcgm;
  render_dcgm_metrics(dcgm, snap);
  EXPECT_NE(dcgm.find("# TYPE DCGM_FI_PROF_PIPE_INT_ACTIVE gauge\n"), std::string::npos) << dcgm;
  const auto at = dcgm.find("DCGM_FI_PROF_PIPE_INT_ACTIVE{gpu=\"0\"");
  ASSERT_NE(at, std::string::npos) << dcgm;
  const std::string line = dcgm.substr(at, dcgm.find('\n', at) - at);
  EXPECT_TRUE(line.ends_with("} 0.635")) << line;  // a ratio, as DCGM's PROF fields are
  EXPECT_EQ(dcgm.find("DCGM_FI_PROF_PIPE_INT_ACTIVE{gpu=\"1\""), std::string::npos);
}

}  // namespace
}  // namespace gpulens::exposition

// SPDX-License-Identifier: Apache-2.0
// `gpulens report --from --to`: the agent's history read back as a trace (devices,
// samples, values, the fall back to one-minute rollups, the errors), and end to
// end through the binary: a store written from a
// reference recording gives the same funnel as the recording itself.
#include "store/history_trace.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "core/clock_reasons.hpp"
#include "core/duration.hpp"
#include "store/history_store.hpp"
#include "store/store_writer.hpp"
#include "store_support.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::store {
namespace {

using gpulens::testing::run_gpulens;
using gpulens::testing::scratch_dir;

constexpr double kT0 = 1795200000;  // 2026-11-20T18:40:00Z: minutes start on it

// Two H100s without NVLink: what the history says of a metric a GPU lacks comes back.
TraceHeader two_gpus() {
  TraceHeader h = gpulens::testing::h100_history_header(2);
  for (auto& d : h.devices) d.unsupported.push_back({Metric::NvlinkRxMibs, "n/a: no NVLink"});
  return h;
}

// One GPU's sample at `t`: busy (a kernel on 90 % of SMs, tensor pipes at 60 %)
// or idle; energy counts 300 W or 100 W since kT0.
StoredSample sample(int gpu, double t, bool busy) {
  StoredSample s;
  s.gpu = gpu;
  s.t = t;
  s.values.set(Metric::GpuUtil, busy ? 100.0 : 0.0);
  s.values.set(Metric::SmActive, busy ? 90.0 : 0.0);
  s.values.set(Metric::TensorActive, busy ? 60.0 : 0.0);
  s.values.set(Metric::DramActive, busy ? 20.0 : 0.0);
  s.values.set(Metric::PowerW, busy ? 300.0 : 100.0);
  s.values.set(Metric::EnergyMj, 5e9 + (t - kT0) * (busy ? 300000.0 : 100000.0));
  s.values.set(Metric::MemUsedMib, busy ? 40000.0 : 500.0);
  // A counter read every 30 s and repeated in between, as PCIe replays are.
  s.values.set(Metric::PcieReplays, std::floor((t - kT0) / 30));
  s.values.set(Metric::ClockEventReasons,
               busy ? static_cast<double>(clock_reason::kSwPowerCap) : 0.0);
  s.state = busy ? "compute_bound" : "idle";
  s.throttled = busy;
  return s;
}

class HistoryTraceTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = scratch_dir("rh-store") + "/history.db"; }

  // Writes `seconds` of 1 Hz samples from kT0 for both GPUs: GPU 0 busy from
  // `busy_from` seconds on, GPU 1 always idle; then rolls every minute up.
  void write(int seconds, int busy_from, double raw_retention_s = 48 * 3600.0) {
    std::vector<StoredSample> batch;
    for (int i = 0; i < seconds; ++i) {
      batch.push_back(sample(0, kT0 + i, i >= busy_from));
      batch.push_back(sample(1, kT0 + i, false));
    }
    gpulens::testing::write_history(path_, two_gpus(), batch, {}, raw_retention_s);
  }

  Result<HistoryTrace> load(double from, double to, std::vector<int> gpus = {}) {
    return load_history_trace({path_, from, to, std::move(gpus), kMaxRawSamples});
  }

  std::string path_;
};

bool any_contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_F(HistoryTraceTest, RawSamplesBecomeTheTraceTheReaderWouldGive) {
  write(120, 60);
  auto h = load(kT0, kT0 + 120);
  ASSERT_TRUE(h.ok()) << h.error().message;
  const Trace& t = h->trace;
  EXPECT_EQ(t.header.host, "node-7");
  ASSERT_EQ(t.header.devices.size(), 2u);
  EXPECT_EQ(t.header.devices[1].index, 1);
  EXPECT_EQ(t.header.devices[1].uuid, "GPU-1");
  EXPECT_EQ(t.header.devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.header.devices[0].sm_count, 132);
  ASSERT_NE(t.header.devices[0].unsupported_reason(Metric::NvlinkRxMibs), nullptr);
  ASSERT_TRUE(t.header.interval_s);
  EXPECT_DOUBLE_EQ(*t.header.interval_s, 1.0);
  EXPECT_TRUE(t.marks.empty());
  EXPECT_EQ(h->source, "raw");
  EXPECT_EQ(h->rollup_samples, 0u);
  EXPECT_EQ(h->raw_samples, 240u);

  // Time order, both GPUs at every tick: 120 ticks.
  ASSERT_EQ(t.samples.size(), 240u);
  for (std::size_t i = 0; i < t.samples.size(); ++i) {
    EXPECT_DOUBLE_EQ(t.samples[i].t, kT0 + static_cast<double>(i / 2));
    EXPECT_EQ(t.samples[i].gpu, static_cast<int>(i % 2));
    EXPECT_FALSE(t.samples[i].procs.has_value());  // not sampled, rather than none running
  }
  const Sample& busy = t.samples[2 * 90];
  EXPECT_DOUBLE_EQ(*busy.get(Metric::GpuUtil), 100);
  EXPECT_DOUBLE_EQ(*busy.get(Metric::SmActive), 90);
  EXPECT_DOUBLE_EQ(*busy.get(Metric::EnergyMj), 5e9 + 90 * 300000.0);  // every digit
  EXPECT_DOUBLE_EQ(*busy.get(Metric::ClockEventReasons),
                   static_cast<double>(clock_reason::kSwPowerCap));
  EXPECT_FALSE(busy.get(Metric::MemUtil));  // never measured stays absent, not 0
  EXPECT_DOUBLE_EQ(*t.samples[2 * 10].get(Metric::GpuUtil), 0);

  // Where the samples came from is said in every report form.
  EXPECT_TRUE(any_contains(t.warnings, path_)) << t.warnings.front();
  EXPECT_TRUE(any_contains(t.warnings, format_utc_time(kT0)));
  EXPECT_TRUE(any_contains(t.warnings, "no process lists"));
  EXPECT_FALSE(any_contains(t.warnings, "rollups"));
}

TEST_F(HistoryTraceTest, FromIsInclusiveAndToExclusive) {
  write(120, 60);
  auto h = load(kT0 + 10, kT0 + 20);
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_EQ(h->trace.samples.size(), 20u);
  EXPECT_DOUBLE_EQ(h->trace.samples.front().t, kT0 + 10);
  EXPECT_DOUBLE_EQ(h->trace.samples.back().t, kT0 + 19);
}

TEST_F(HistoryTraceTest, GpuFilterReadsOnlyThoseGpus) {
  write(60, 0);
  auto h = load(kT0, kT0 + 60, {1});
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_EQ(h->trace.header.devices.size(), 1u);
  EXPECT_EQ(h->trace.header.devices[0].index, 1);
  ASSERT_EQ(h->trace.samples.size(), 60u);
  for (const auto& s : h->trace.samples) EXPECT_EQ(s.gpu, 1);

  auto missing = load(kT0, kT0 + 60, {0, 5});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("GPU 5 is not in the history"), std::string::npos)
      << missing.error().message;
  EXPECT_NE(missing.error().message.find("GPUs 0, 1"), std::string::npos);
}

// Raw samples older than their retention are gone; their minutes remain and
// stand in as 60 s samples, and the trace says from when on raw samples take over.
TEST_F(HistoryTraceTest, FallsBackToMinutesWhereRawSamplesWereDropped) {
  // 20 minutes, GPU 0 busy in the second half; keep raw samples for the last 5.
  write(1200, 600, /*raw_retention_s=*/299);
  auto h = load(kT0, kT0 + 1200);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->source, "rollup_1m+raw");
  ASSERT_TRUE(h->raw_from);
  EXPECT_DOUBLE_EQ(*h->raw_from, kT0 + 900);
  EXPECT_EQ(h->rollup_samples, 2u * 15);  // minutes 0..14, both GPUs
  EXPECT_EQ(h->raw_samples, 2u * 300);
  ASSERT_TRUE(h->trace.header.interval_s);
  EXPECT_DOUBLE_EQ(*h->trace.header.interval_s, 60.0);

  const auto& s = h->trace.samples;
  // A minute's sample ends its minute, carries its means...
  EXPECT_DOUBLE_EQ(s[0].t, kT0 + 60);
  EXPECT_EQ(s[0].gpu, 0);
  EXPECT_DOUBLE_EQ(*s[0].get(Metric::GpuUtil), 0);
  EXPECT_DOUBLE_EQ(s[2 * 14].t, kT0 + 900);
  EXPECT_DOUBLE_EQ(*s[2 * 14].get(Metric::SmActive), 90);
  EXPECT_DOUBLE_EQ(*s[2 * 14].get(Metric::PowerW), 300);
  // ...the energy counter's last reading, and the throttle reasons of a minute
  // that was throttled throughout.
  EXPECT_DOUBLE_EQ(*s[2 * 14].get(Metric::EnergyMj), 5e9 + 899 * 300000.0);
  EXPECT_DOUBLE_EQ(*s[2 * 14].get(Metric::PcieReplays), 29);  // 899 s / 30, not the mean
  EXPECT_DOUBLE_EQ(*s[2 * 14].get(Metric::ClockEventReasons),
                   static_cast<double>(clock_reason::kSwPowerCap));
  // Then raw samples, in time order.
  EXPECT_DOUBLE_EQ(s[2 * 15].t, kT0 + 900);
  EXPECT_DOUBLE_EQ(s.back().t, kT0 + 1199);
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_LE(s[i - 1].t, s[i].t);

  EXPECT_TRUE(any_contains(h->trace.warnings,
                           "before " + format_utc_time(kT0 + 900) + " from 1-minute rollups"))
      << h->trace.warnings[1];
}

TEST_F(HistoryTraceTest, RollupsOnlyWhenNoRawSampleIsLeftInTheRange) {
  write(1200, 600, /*raw_retention_s=*/299);
  auto h = load(kT0, kT0 + 600);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->source, "rollup_1m");
  EXPECT_FALSE(h->raw_from);
  EXPECT_EQ(h->trace.samples.size(), 2u * 10);
  EXPECT_TRUE(any_contains(h->trace.warnings, "all from 1-minute rollups"));
}

// A range with more raw samples than a report holds in memory reads the newest
// of them, and the minutes before.
TEST_F(HistoryTraceTest, ReadsOlderRawSamplesAsMinutesPastTheBudget) {
  write(1200, 600);
  auto h = load_history_trace({path_, kT0, kT0 + 1200, {}, /*max_raw_samples=*/600});
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->source, "rollup_1m+raw");
  ASSERT_TRUE(h->raw_capped_at);
  EXPECT_EQ(*h->raw_capped_at, 2400);
  EXPECT_EQ(h->raw_samples, 600u);
  EXPECT_EQ(h->rollup_samples, 2u * 15);
  ASSERT_TRUE(h->raw_from);
  EXPECT_DOUBLE_EQ(*h->raw_from, kT0 + 900);
  EXPECT_TRUE(
      any_contains(h->trace.warnings, "holds 2400 raw samples; a report reads the newest 600"));

  auto all = load(kT0, kT0 + 1200);  // the default budget holds them all
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->raw_capped_at);
  EXPECT_EQ(all->raw_samples, 2400u);
}

// A minute only partly throttled keeps its other clock reasons but not the
// throttling ones: one 60 s sample is throttled or not as a whole.
TEST_F(HistoryTraceTest, AMinuteCountsAsThrottledOnlyWhenMostOfItWas) {
  StoreOptions o;
  o.path = path_;
  o.raw_retention_s = 10;
  {
    auto store = HistoryStore::open(o);
    ASSERT_TRUE(store.ok());
    std::vector<StoredSample> batch;
    for (int i = 0; i < 60; ++i) {
      StoredSample s = sample(0, kT0 + i, true);
      s.throttled = i < 20;
      s.values.set(
          Metric::ClockEventReasons,
          static_cast<double>(clock_reason::kGpuIdle | (i < 20 ? clock_reason::kSwPowerCap : 0)));
      batch.push_back(s);
    }
    batch.push_back(sample(0, kT0 + 600, true));  // later: raw retention drops the minute
    ASSERT_TRUE(store->write(batch, {}).ok());
    ASSERT_TRUE(store->roll_up_closed(true).ok());
    ASSERT_TRUE(store->enforce_limits().ok());
  }
  auto h = load(kT0, kT0 + 60);
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_EQ(h->trace.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*h->trace.samples[0].get(Metric::ClockEventReasons),
                   static_cast<double>(clock_reason::kGpuIdle));
}

// The verdict on minutes says what the verdict on the same seconds says: the
// funnel to the rounding of the store, the states where the workload held a
// minute or more.
TEST_F(HistoryTraceTest, VerdictFromMinutesMatchesTheVerdictFromRawSamples) {
  write(3600, 1800, /*raw_retention_s=*/48 * 3600.0);
  auto raw = load(kT0, kT0 + 3600);
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  ASSERT_EQ(raw->source, "raw");
  // The same file with every raw sample dropped.
  {
    StoreOptions o;
    o.path = path_;
    o.raw_retention_s = 1;
    auto store = HistoryStore::open(o);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(store->write({sample(0, kT0 + 7200, false)}, {}).ok());
    ASSERT_TRUE(store->enforce_limits().ok());
  }
  auto minutes = load(kT0, kT0 + 3600);
  ASSERT_TRUE(minutes.ok()) << minutes.error().message;
  ASSERT_EQ(minutes->source, "rollup_1m");
  ASSERT_EQ(minutes->trace.samples.size(), 2u * 60);

  verdict::VerdictOptions options;
  options.edges_apart = false;  // as `gpulens report --from` does: history has no start-up
  const verdict::Verdict a = verdict::build_verdict(raw->trace, options);
  const verdict::Verdict b = verdict::build_verdict(minutes->trace, options);
  ASSERT_TRUE(a.measured && b.measured);
  EXPECT_NEAR(a.duration_s, 3600, 1.0);
  EXPECT_NEAR(b.duration_s, 3600, 1.0);
  for (const char* id : {"allocated", "kernel_active", "sm_active", "tensor_active"}) {
    ASSERT_TRUE(a.funnel.step(id)->share && b.funnel.step(id)->share) << id;
    EXPECT_NEAR(*a.funnel.step(id)->share, *b.funnel.step(id)->share, 0.01) << id;
  }
  EXPECT_NEAR(*b.funnel.step("kernel_active")->share, 0.25, 0.01);  // GPU 0 half the hour
  ASSERT_TRUE(a.energy_kwh && b.energy_kwh);
  EXPECT_NEAR(*b.energy_kwh, *a.energy_kwh, *a.energy_kwh * 0.02);
  // GPU 0 busy half the time, GPU 1 idle: three quarters idle, a quarter at work.
  auto share = [](const verdict::Verdict& v, diagnosis::GpuState s) {
    for (const auto& st : v.states) {
      if (st.state == s) return st.share;
    }
    return 0.0;
  };
  EXPECT_NEAR(share(b, diagnosis::GpuState::Idle), 0.75, 0.02);
  EXPECT_NEAR(share(b, diagnosis::GpuState::ComputeBound), 0.25, 0.02);
  EXPECT_NEAR(share(a, diagnosis::GpuState::ComputeBound),
              share(b, diagnosis::GpuState::ComputeBound), 0.02);
  EXPECT_NEAR(b.throttled_share, 0.25, 0.02);
}

TEST_F(HistoryTraceTest, ReadsWhileTheAgentHoldsAWriteOpen) {
  write(60, 0);
  StoreOptions o;
  o.path = path_;
  auto agent = HistoryStore::open(o);
  ASSERT_TRUE(agent.ok());
  // A batch in flight: not committed, so not seen, and never blocked.
  ASSERT_TRUE(agent->db().exec("BEGIN IMMEDIATE").ok());
  ASSERT_TRUE(agent->db()
                  .exec(fmt::format("DELETE FROM samples WHERE t_ms < {}",
                                    static_cast<std::int64_t>((kT0 + 30) * 1000)))
                  .ok());
  auto h = load(kT0, kT0 + 60);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->trace.samples.size(), 120u);
  ASSERT_TRUE(agent->db().exec("COMMIT").ok());
  // And the agent goes on writing after the report has read.
  EXPECT_TRUE(agent->write({sample(0, kT0 + 61, true)}, {}).ok());
  h = load(kT0, kT0 + 62);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->trace.samples.size(), 61u);
}

TEST_F(HistoryTraceTest, ErrorsNameTheFileAndTheWayOut) {
  auto missing = load(kT0, kT0 + 60);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(path_), std::string::npos);
  EXPECT_NE(missing.error().message.find("gpulens serve"), std::string::npos);
  EXPECT_NE(missing.error().message.find("--history"), std::string::npos);

  auto dir = load_history_trace(
      {std::filesystem::path(path_).parent_path().string(), kT0, kT0 + 1, {}, kMaxRawSamples});
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("is a directory"), std::string::npos);

  std::ofstream(path_) << "plain text, not a database, long enough for the header ............"
                          "..................................................................";
  auto text = load(kT0, kT0 + 60);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("not a gpulens history"), std::string::npos)
      << text.error().message;
  std::filesystem::remove(path_);

  {  // SQLite, but not ours.
    auto db = Database::open(path_, false, true);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("CREATE TABLE other (x)").ok());
  }
  auto foreign = load(kT0, kT0 + 60);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("not a gpulens history database"), std::string::npos)
      << foreign.error().message;
  std::filesystem::remove(path_);

  {  // An agent that has not committed a sample yet.
    StoreOptions o;
    o.path = path_;
    ASSERT_TRUE(HistoryStore::open(o).ok());
  }
  auto empty = load(kT0, kT0 + 60);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("holds no samples yet"), std::string::npos)
      << empty.error().message;

  write(120, 60, /*raw_retention_s=*/30);
  auto outside = load(kT0 + 3600, kT0 + 7200);
  ASSERT_FALSE(outside.ok());
  const std::string& m = outside.error().message;
  EXPECT_NE(m.find("no samples in " + path_), std::string::npos) << m;
  EXPECT_NE(m.find("raw samples from " + format_utc_time(kT0 + 89)), std::string::npos) << m;
  EXPECT_NE(
      m.find("1-minute rollups from " + format_utc_time(kT0) + " to " + format_utc_time(kT0 + 120)),
      std::string::npos)
      << m;

  auto backwards = load(kT0 + 60, kT0);
  ASSERT_FALSE(backwards.ok());
  EXPECT_NE(backwards.error().message.find("must be before"), std::string::npos);
}

// ---- end to end, through the binary ----

// The store the agent would write from this recording: every sample through the
// agent's writer, the minutes rolled up when it stops.
Trace write_store_from(const std::string& trace_name, const std::string& db) {
  auto trace = read_trace(std::string(GPULENS_FIXTURES) + "/traces/" + trace_name,
                          TraceReadOptions{.lenient = true});
  EXPECT_TRUE(trace.ok()) << (trace.ok() ? "" : trace.error().message);
  if (!trace.ok()) return {};
  StoreOptions o;
  o.path = db;
  StoreWriter writer(o, WriterOptions{}, [](bool error, const std::string& message) {
    if (error) ADD_FAILURE() << message;
  });
  writer.start(trace->header);
  std::vector<StoredSample> rows;
  for (const auto& s : trace->samples)
    rows.push_back(StoredSample{s.gpu, s.t, s.values, "", false});
  writer.push(std::move(rows), {});
  writer.stop();
  EXPECT_EQ(writer.status().samples_written, trace->samples.size());
  return std::move(*trace);
}

double number(const nlohmann::json& j) {
  return j.is_number() ? j.get<double>() : -1;
}

class ReportFromHistory : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportFromHistory, GivesTheFunnelOfTheRecordingItself) {
  const std::string db = scratch_dir("rh-e2e") + "/history.db";
  const std::string name = GetParam() + ".trace.jsonl";
  const Trace trace = write_store_from(name, db);
  ASSERT_FALSE(trace.samples.empty());
  const double first = std::floor(trace.samples.front().t);
  const double last = trace.samples.back().t;

  const auto file = run_gpulens("report --format json --lenient tests/fixtures/traces/" + name);
  ASSERT_EQ(file.exit_code, 0) << file.err;
  const auto hist = run_gpulens(fmt::format(
      "report --format json --history '{}' --from {:.0f} --to {:.3f}", db, first, last + 1));
  ASSERT_EQ(hist.exit_code, 0) << hist.err;
  const auto a = nlohmann::json::parse(file.out);
  const auto b = nlohmann::json::parse(hist.out);

  EXPECT_EQ(b["source"]["kind"], "history");
  EXPECT_EQ(b["source"]["db"], db);
  EXPECT_EQ(b["source"]["samples"], "raw");
  EXPECT_EQ(b["host"], a["host"]);
  ASSERT_EQ(b["gpus"].size(), a["gpus"].size());
  for (std::size_t i = 0; i < a["gpus"].size(); ++i) {
    EXPECT_EQ(b["gpus"][i]["uuid"], a["gpus"][i]["uuid"]);
    for (const char* key : {"kernel_active", "sm_active", "tensor_active"}) {
      EXPECT_NEAR(number(b["gpus"][i]["funnel"][key]), number(a["gpus"][i]["funnel"][key]), 0.002)
          << "GPU " << i << " " << key;
    }
  }
  // The store keeps hundredths of a percent: the funnel agrees to rounding.
  // Allocated may differ a little more: history keeps no process lists, so it
  // rests on device memory in use where the recording had processes.
  for (const char* key : {"kernel_active", "sm_active", "tensor_active"}) {
    EXPECT_NEAR(number(b["funnel"][key]), number(a["funnel"][key]), 0.002) << key;
  }
  EXPECT_NEAR(number(b["funnel"]["allocated"]), number(a["funnel"]["allocated"]), 0.02);
  EXPECT_NEAR(number(b["duration_s"]), number(a["duration_s"]), 0.05);
  EXPECT_NEAR(number(b["gpu_hours"]), number(a["gpu_hours"]), number(a["gpu_hours"]) * 0.002);
  EXPECT_NEAR(number(b["energy_kwh"]), number(a["energy_kwh"]), number(a["energy_kwh"]) * 0.01);
  EXPECT_NEAR(number(b["cost"]["total"]), number(a["cost"]["total"]),
              number(a["cost"]["total"]) * 0.002);
  // A history range has no start-up or tear-down: the recording's are idle time
  // there. The waste rests on the diagnosed states, which agree to a percent.
  EXPECT_NEAR(number(b["cost"]["waste"]), number(a["cost"]["waste"]) + number(a["cost"]["edges"]),
              number(a["cost"]["total"]) * 0.01);
}

INSTANTIATE_TEST_SUITE_P(ReferenceRecordings, ReportFromHistory,
                         ::testing::Values("multi-gpu-h200x2", "training-h100"));

TEST(ReportFromHistoryCli, TextAndHtmlSayTheySourceIsTheHistory) {
  const std::string dir = scratch_dir("rh-cli");
  const std::string db = dir + "/history.db";
  const Trace trace = write_store_from("multi-gpu-h200x2.trace.jsonl", db);
  ASSERT_FALSE(trace.samples.empty());
  const std::string range =
      fmt::format("--db '{}' --from {:.0f} --to {:.0f}", db, std::floor(trace.samples.front().t),
                  std::ceil(trace.samples.back().t) + 1);
  const auto text = run_gpulens("report " + range);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(text.out.starts_with("gpulens: history of vm")) << text.out.substr(0, 200);
  EXPECT_NE(text.out.find("  source   " + db + ", 2026-"), std::string::npos);
  EXPECT_NE(text.out.find("note: from the agent's history " + db), std::string::npos);

  const std::string html = dir + "/r.html";
  const auto page = run_gpulens("report " + range + " -o '" + html + "'");
  ASSERT_EQ(page.exit_code, 0) << page.err;
  const std::string body = gpulens::testing::read_file(html);
  EXPECT_NE(body.find("<title>gpulens report: history of vm, 2026-"), std::string::npos);
  EXPECT_NE(body.find(db), std::string::npos);

  // --gpus reads and judges only that GPU.
  const auto one = run_gpulens("report --format json --gpus 1 " + range);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto j = nlohmann::json::parse(one.out);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["index"], 1);
  EXPECT_EQ(j["gpus_basis"], "--gpus");
}

}  // namespace
}  // namespace gpulens::store

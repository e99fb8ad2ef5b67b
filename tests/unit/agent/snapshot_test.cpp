// SPDX-License-Identifier: Apache-2.0
// The snapshot holds a GPU's last process list across ticks that read no
// processes (recordings and slow process reads list them every few seconds), so
// /api/v1/latest, /metrics and the dashboard agree with the memory in use
// instead of flashing "no process" in between; an empty read replaces it.
#include "agent/snapshot.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "diagnosis/config.hpp"
#include "diagnosis/engine.hpp"
#include "exposition/api_json.hpp"
#include "exposition/exposition.hpp"

namespace gpulens::agent {
namespace {

TraceHeader processes_header() {
  TraceHeader h;
  h.host = "node-1";
  h.interval_s = 1.0;
  DeviceInfo d;
  d.index = 0;
  d.uuid = "GPU-0";
  d.name = "NVIDIA H100 80GB HBM3";
  d.mem_total_mib = 81559;
  h.devices.push_back(d);
  return h;
}

Tick tick(double t, std::optional<std::vector<ProcessSample>> procs) {
  Tick k;
  k.t = t;
  Sample s;
  s.t = t;
  s.gpu = 0;
  s.values.set(Metric::GpuUtil, 90);
  s.values.set(Metric::MemUsedMib, 30000);
  s.procs = std::move(procs);
  k.samples.push_back(std::move(s));
  return k;
}

ProcessSample trainer() {
  ProcessSample p;
  p.pid = 4242;
  p.name = "python";
  p.used_mib = 29000;
  return p;
}

class SnapshotProcesses : public ::testing::Test {
 protected:
  agent::SnapshotPtr feed(const Tick& t) {
    engine_.on_tick(t);
    return builder_.build(t, engine_, {}, agent::SourceHealth{});
  }
  TraceHeader h_ = processes_header();
  agent::SnapshotBuilder builder_{h_, "", false};
  diagnosis::DiagnosisEngine engine_{h_, diagnosis::DiagnosisConfig::defaults()};
};

TEST_F(SnapshotProcesses, TicksWithoutAProcessReadKeepTheLastList) {
  feed(tick(100, std::vector<ProcessSample>{trainer()}));
  const auto snap = feed(tick(101, std::nullopt));
  const auto& g = snap->gpus.at(0);
  ASSERT_TRUE(g.sample && g.sample->procs);
  ASSERT_EQ(g.sample->procs->size(), 1u);
  EXPECT_EQ(g.sample->procs->front().pid, 4242u);
  EXPECT_EQ(g.sample->t, 101);  // the counters are the new tick's

  const auto latest = exposition::latest_json(*snap, false);
  ASSERT_EQ(latest["gpus"][0]["processes"].size(), 1u) << latest.dump(2);
  std::string metrics;
  exposition::render_gpu_metrics(metrics, *snap);
  EXPECT_NE(metrics.find("gpulens_gpu_processes{"), std::string::npos);
}

TEST_F(SnapshotProcesses, AnEmptyReadReplacesTheHeldList) {
  feed(tick(100, std::vector<ProcessSample>{trainer()}));
  feed(tick(101, std::nullopt));
  const auto snap = feed(tick(102, std::vector<ProcessSample>{}));
  const auto& g = snap->gpus.at(0);
  ASSERT_TRUE(g.sample && g.sample->procs);
  EXPECT_TRUE(g.sample->procs->empty());
}

TEST_F(SnapshotProcesses, NoListBeforeTheFirstRead) {
  const auto snap = feed(tick(100, std::nullopt));
  EXPECT_FALSE(snap->gpus.at(0).sample->procs.has_value());
}

TEST_F(SnapshotProcesses, ProcessSeriesScaleTheirReadingsAndSkipMissingOnes) {
  ProcessSample loader;
  loader.pid = 77;
  loader.name = "loader";
  loader.used_mib = 512;
  ProcessSample busy = trainer();
  busy.sm_util = 37;
  const auto snap = feed(tick(100, std::vector<ProcessSample>{loader, busy}));
  std::string out;
  exposition::render_process_metrics(out, *snap);
  const auto count = [&](std::string_view needle) {
    std::size_t n = 0;
    for (auto at = out.find(needle); at != std::string::npos; at = out.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("# TYPE gpulens_process_memory_used_bytes gauge"), 1u) << out;
  EXPECT_EQ(count("# TYPE gpulens_process_sm_utilization_ratio gauge"), 1u) << out;
  const std::string no_kube =
      R"(,container_id="",pod_uid="",namespace="",pod="",container="",slurm_job="",)"
      R"(slurm_step="",slurm_account=""})";
  const std::string loader_labels = fmt::format(R"(pid="77",process="loader"{})", no_kube);
  const std::string trainer_labels = fmt::format(R"(pid="4242",process="python"{})", no_kube);
  EXPECT_NE(out.find(fmt::format("{} 536870912\n", loader_labels)), std::string::npos) << out;
  EXPECT_NE(out.find(fmt::format("{} 30408704000\n", trainer_labels)), std::string::npos) << out;
  // The loader read no SM share: one series, the trainer's.
  EXPECT_EQ(count("gpulens_process_sm_utilization_ratio{"), 1u) << out;
  EXPECT_NE(out.find("gpulens_process_sm_utilization_ratio{gpu=\"0\""), std::string::npos) << out;
  EXPECT_NE(out.find(fmt::format("{} 0.37\n", trainer_labels)), std::string::npos) << out;
}

TEST_F(SnapshotProcesses, NoProcessSeriesFamilyWithoutAReading) {
  ProcessSample bare;
  bare.pid = 9;
  bare.name = "idle";
  const auto snap = feed(tick(100, std::vector<ProcessSample>{bare}));
  std::string out;
  exposition::render_process_metrics(out, *snap);
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace gpulens::agent

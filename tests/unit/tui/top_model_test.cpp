// SPDX-License-Identifier: Apache-2.0
// The model behind `gpulens top`, fed from a real recording through the same
// diagnosis engine as `stream`.
#include "tui/top_model.hpp"

#include <gtest/gtest.h>

#include <map>

#include "diagnosis/config.hpp"
#include "diagnosis/engine.hpp"
#include "sampler/open_source.hpp"

namespace gpulens::tui {
namespace {

struct Fed {
  TopModel model;
  std::size_t ticks = 0;
};

Fed feed(const std::string& trace, std::size_t ticks, std::size_t history, bool diagnose = true) {
  sampler::SourceOptions so;
  so.replay = std::string(GPULENS_FIXTURES) + "/traces/" + trace;
  so.speed = 0;
  auto source = sampler::open_tick_source(so);
  if (!source) ADD_FAILURE() << source.error().message;
  diagnosis::DiagnosisEngine engine((*source)->header(), diagnosis::DiagnosisConfig{});
  ModelBuilder builder((*source)->header(), history);
  while (builder.ticks() < ticks) {
    auto tick = (*source)->next();
    if (!tick || !tick->has_value()) break;
    engine.on_tick(**tick);
    builder.on_tick(**tick, diagnose ? &engine : nullptr);
  }
  return {builder.model(), builder.ticks()};
}

TEST(TuiModel, ImbalancedJobShowsTheBusyGpuAndTheOneWaiting) {
  const Fed f = feed("multi-gpu-h200x2.trace.jsonl", 300, 50);
  ASSERT_EQ(f.ticks, 300u);
  ASSERT_EQ(f.model.gpus.size(), 2u);
  const GpuView& busy = f.model.gpus[0];
  const GpuView& idle = f.model.gpus[1];
  EXPECT_EQ(busy.name, "NVIDIA H200");
  EXPECT_EQ(busy.state, "compute_bound");
  EXPECT_TRUE(busy.throttled);
  EXPECT_EQ(idle.state, "waiting_on_peer");
  EXPECT_GT(*idle.util, 90);
  EXPECT_LT(*idle.sm_active, 2);
  EXPECT_FALSE(idle.fix.empty());
  EXPECT_FALSE(idle.summary.empty());
  EXPECT_EQ(idle.util_history.size(), 50u);  // capped at --history
  EXPECT_EQ(f.model.procs.size(), 2u);       // one python per GPU
  EXPECT_EQ(f.model.procs[1].gpu, 1);
  EXPECT_EQ(f.model.procs[1].command, "python");
}

TEST(TuiModel, WithoutDiagnosisNoStateIsInvented) {
  const Fed f = feed("multi-gpu-h200x2.trace.jsonl", 20, 10, false);
  EXPECT_FALSE(f.model.diagnosis);
  for (const auto& g : f.model.gpus) EXPECT_TRUE(g.state.empty());
}

TEST(TuiModel, ProcessesKeepUserRssAndCpuFromTheRecording) {
  const Fed f = feed("calibration-gpulens-h100.trace.jsonl", 40, 10);
  ASSERT_FALSE(f.model.procs.empty());
  EXPECT_EQ(f.model.procs[0].user, "root");
  EXPECT_TRUE(f.model.procs[0].rss_mib.has_value());
}

TEST(TuiModel, SlurmJobOfAProcessIsJobDotStep) {
  TraceHeader h;
  h.devices.push_back(DeviceInfo{});
  ModelBuilder builder(h, 10);
  Tick t;
  t.t = 1;
  Sample s;
  s.t = 1;
  ProcessSample in_job, no_step, unknown, plain;
  in_job.pid = 1;
  in_job.slurm = SlurmJob{"4101", "batch", "alice", "physics", "", "", "cgroup", ""};
  no_step.pid = 2;
  no_step.slurm = SlurmJob{};
  no_step.slurm->job = "4102";
  unknown.pid = 3;
  unknown.slurm = SlurmJob{};
  unknown.slurm->unknown = "malformed SLURM_JOB_ID";
  plain.pid = 4;
  s.procs = std::vector<ProcessSample>{in_job, no_step, unknown, plain};
  t.samples.push_back(s);
  builder.on_tick(t, nullptr);
  std::map<std::uint32_t, ProcView> by_pid;
  for (const auto& p : builder.model().procs) by_pid[p.pid] = p;
  EXPECT_EQ(by_pid[1].job, "4101.batch");
  EXPECT_EQ(by_pid[1].account, "physics");
  EXPECT_EQ(by_pid[2].job, "4102");
  EXPECT_EQ(by_pid[3].job, "slurm:?");
  EXPECT_EQ(by_pid[4].job, "");
}

}  // namespace
}  // namespace gpulens::tui

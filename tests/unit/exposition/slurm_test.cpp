// SPDX-License-Identifier: Apache-2.0
// The Slurm job of a process in /metrics (per-process series only, never per GPU),
// /api/v1/latest, and the agent's count of processes it could not attribute.
#include <gtest/gtest.h>

#include <string>

#include "exposition/api_json.hpp"
#include "exposition/exposition.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

agent::LiveSnapshot slurm_snapshot() {
  auto snap = gpulens::testing::fixed_snapshot();
  auto& p0 = snap.gpus[0].sample->procs->front();
  p0.slurm = SlurmJob{"4101", "0", "alice", "physics", "4100", "1", "cgroup", ""};
  auto& p1 = snap.gpus[1].sample->procs->front();
  p1.slurm = SlurmJob{};
  p1.slurm->unknown = "malformed SLURM_JOB_ID";
  return snap;
}

TEST(SlurmExposition, ProcessSeriesCarryTheJobAndAccount) {
  const auto snap = slurm_snapshot();
  std::string text;
  render_process_metrics(text, snap);
  EXPECT_NE(text.find("gpulens_process_memory_used_bytes{gpu=\"0\","), std::string::npos) << text;
  EXPECT_NE(text.find(",slurm_job=\"4101\",slurm_step=\"0\",slurm_account=\"physics\"}"),
            std::string::npos)
      << text;
  // A process whose job is unknown keeps the label set, empty (no "unknown" value
  // that every such process would share as if it were one job).
  EXPECT_NE(text.find("pid=\"4243\""), std::string::npos) << text;
  EXPECT_NE(text.find(",slurm_job=\"\",slurm_step=\"\",slurm_account=\"\"}"), std::string::npos)
      << text;
  // The user stays out of labels (docs/slurm.md).
  EXPECT_EQ(text.find("alice"), std::string::npos) << text;
}

TEST(SlurmExposition, NoSlurmLabelOnPerGpuSeries) {
  const auto snap = slurm_snapshot();
  std::string gpu, diagnosis, dcgm;
  render_gpu_metrics(gpu, snap);
  render_diagnosis_metrics(diagnosis, snap);
  render_dcgm_metrics(dcgm, snap);
  for (const auto* text : {&gpu, &diagnosis, &dcgm}) {
    EXPECT_FALSE(text->empty());
    EXPECT_EQ(text->find("slurm"), std::string::npos) << *text;
  }
}

TEST(SlurmExposition, LatestApiHasTheJobObject) {
  const auto latest = latest_json(slurm_snapshot(), false);
  const auto& p0 = latest["gpus"][0]["processes"][0];
  EXPECT_EQ(p0["slurm"]["job"], "4101");
  EXPECT_EQ(p0["slurm"]["step"], "0");
  EXPECT_EQ(p0["slurm"]["user"], "alice");
  EXPECT_EQ(p0["slurm"]["account"], "physics");
  EXPECT_EQ(p0["slurm"]["array_job"], "4100");
  EXPECT_EQ(p0["slurm"]["from"], "cgroup");
  const auto& p1 = latest["gpus"][1]["processes"][0];
  EXPECT_EQ(p1["slurm"]["job"], "");
  EXPECT_EQ(p1["slurm"]["unknown"], "malformed SLURM_JOB_ID");
  // Off Slurm there is no "slurm" object.
  const auto plain = latest_json(gpulens::testing::fixed_snapshot(), false);
  EXPECT_FALSE(plain["gpus"][0]["processes"][0].contains("slurm"));
}

TEST(SlurmExposition, AttributionProblemsInSelfMetricsAndHealth) {
  auto snap = slurm_snapshot();
  sources::SamplerStats stats;
  stats.slurm_problems[static_cast<std::size_t>(sources::SlurmProblem::MalformedJobId)] = 3;
  stats.slurm_problems[static_cast<std::size_t>(sources::SlurmProblem::EnvironUnreadable)] = 2;
  snap.source.live = true;
  snap.source.sampler = stats;
  std::string text;
  render_self_metrics(text, snap, SelfStats{});
  EXPECT_NE(text.find("# TYPE gpulens_slurm_attribution_problems_total counter"), std::string::npos)
      << text;
  EXPECT_NE(text.find("gpulens_slurm_attribution_problems_total{reason=\"malformed_job_id\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("gpulens_slurm_attribution_problems_total{reason=\"environ_unreadable\"} 2\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("gpulens_slurm_attribution_problems_total{reason=\"unknown_cgroup_layout\"} 0\n"),
      std::string::npos);
  const auto health = health_json(snap, std::nullopt, snap.t);
  EXPECT_EQ(health["source"]["slurm_problems"]["malformed_job_id"], 3) << health.dump(2);
  EXPECT_EQ(health["source"]["slurm_problems"]["environ_cgroup_disagree"], 0);
}

}  // namespace
}  // namespace gpulens::exposition

// SPDX-License-Identifier: Apache-2.0
// The agent keeps each tick's Slurm jobs in its history: a recording whose
// processes carry x_slurm, replayed through the agent and its writer, gives the
// rows behind `gpulens report --slurm-job`, each job on the GPUs and ticks its
// processes were seen on.
#include "agent/agent.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "sampler/open_source.hpp"
#include "server_support.hpp"
#include "store/slurm_job_trace.hpp"
#include "store/store_writer.hpp"

namespace gpulens::agent {
namespace {

constexpr double kT0 = 1795200000;

// 30 ticks of two GPUs: job 77 (step 0) on GPU 0 in ticks 5..20, job 78 (step
// batch) on GPU 1 in ticks 10..29, a process outside Slurm on GPU 0 throughout.
std::string write_trace(const std::string& dir) {
  const std::string path = dir + "/slurm.trace.jsonl";
  std::ofstream out(path);
  out << R"({"format": "gpu-trace", "version": 1, "host": "node-7", "interval_s": 1.0, )"
      << R"("devices": [{"index": 0, "uuid": "GPU-a", "name": "NVIDIA H100 80GB HBM3"}, )"
      << R"({"index": 1, "uuid": "GPU-b", "name": "NVIDIA H100 80GB HBM3"}]})"
      << "\n";
  const auto slurm = [](const char* job, const char* step, const char* user) {
    return fmt::format(R"("x_slurm": {{"job": "{}", "step": "{}", "user": "{}", "account": )"
                       R"("physics", "from": "cgroup"}})",
                       job, step, user);
  };
  for (int i = 0; i < 30; ++i) {
    std::string p0 = R"({"pid": 10, "name": "daemon"})";
    if (i >= 5 && i <= 20)
      p0 += fmt::format(R"(, {{"pid": 11, "name": "python", {}}})", slurm("77", "0", "alice"));
    std::string p1;
    if (i >= 10)
      p1 = fmt::format(R"({{"pid": 12, "name": "python", {}}})", slurm("78", "batch", "bob"));
    out << fmt::format(
               R"({{"t": {:.1f}, "gpu": 0, "gpu_util": 50, "sm_active": 40.0, "procs": [{}]}})",
               kT0 + i, p0)
        << "\n";
    out << fmt::format(
               R"({{"t": {:.1f}, "gpu": 1, "gpu_util": 0, "sm_active": 0.0, "procs": [{}]}})",
               kT0 + i, p1)
        << "\n";
  }
  return path;
}

TEST(AgentSlurmHistory, EachTicksJobsReachTheHistory) {
  const std::string dir = gpulens::testing::scratch_dir("agent-slurm");
  sampler::SourceOptions so;
  so.replay = write_trace(dir);
  so.speed = 0;
  auto source = sampler::open_tick_source(so);
  ASSERT_TRUE(source.ok()) << source.error().message;
  store::StoreOptions o;
  o.path = dir + "/history.db";
  store::StoreWriter writer(o, store::WriterOptions{}, [](bool error, const std::string& m) {
    if (error) ADD_FAILURE() << m;
  });
  writer.start((*source)->header());
  {
    Agent agent(std::move(*source), AgentOptions{}, &writer);
    agent.start();
    agent.join();
  }
  writer.stop();

  auto job = store::load_slurm_job_trace(o.path, "77");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->gpus, (std::vector<int>{0}));
  EXPECT_EQ(job->steps, (std::vector<std::string>{"0"}));
  EXPECT_EQ(job->user, "alice");
  EXPECT_EQ(job->account, "physics");
  EXPECT_DOUBLE_EQ(job->first_t, kT0 + 5);
  EXPECT_DOUBLE_EQ(job->last_t, kT0 + 20);
  EXPECT_EQ(job->history.trace.samples.size(), 16u);

  auto other = store::load_slurm_job_trace(o.path, "78");
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(other->gpus, (std::vector<int>{1}));
  EXPECT_EQ(other->steps, (std::vector<std::string>{"batch"}));
  EXPECT_DOUBLE_EQ(other->first_t, kT0 + 10);
  EXPECT_DOUBLE_EQ(other->last_t, kT0 + 29);
}

}  // namespace
}  // namespace gpulens::agent

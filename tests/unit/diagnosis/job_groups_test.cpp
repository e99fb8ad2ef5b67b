// SPDX-License-Identifier: Apache-2.0
// Which GPUs are one job: the processes' parents, containers and Slurm jobs, the
// explicit groups `gpulens run` passes, and the grouping modes by name.
#include "diagnosis/job_groups.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::proc;

GpuJobKeys keys(int gpu, std::vector<ProcessSample> procs) {
  Sample s;
  s.gpu = gpu;
  s.procs = std::move(procs);
  return job_keys_of(s);
}

TEST(JobGroups, AllWatchedWhenProcessesSayNothingAboutJobs) {
  const auto groups = group_gpus({keys(0, {proc(594)}), keys(1, {proc(595)})}, JobGrouping::Auto);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0], (std::vector<int>{0, 1}));
}

TEST(JobGroups, SameParentIsOneJobDifferentContainersAreNot) {
  const auto groups = group_gpus(
      {keys(0, {proc(10, {}, {}, {}, 5u)}), keys(1, {proc(11, {}, {}, {}, 5u)}),
       keys(2, {proc(20, {}, {}, {}, {}, "abc")}), keys(3, {proc(21, {}, {}, {}, {}, "def")})},
      JobGrouping::Auto);
  EXPECT_EQ(groups, (std::vector<std::vector<int>>{{0, 1}, {2}, {3}}));
}

TEST(JobGroups, OneSlurmJobIsOneJobAcrossItsSteps) {
  const auto in_job = [](std::uint32_t pid, const std::string& job, const std::string& step) {
    ProcessSample p;
    p.pid = pid;
    p.slurm = SlurmJob{};
    p.slurm->job = job;
    p.slurm->step = step;
    return p;
  };
  ProcessSample unknown;
  unknown.pid = 40;
  unknown.slurm = SlurmJob{};  // job unknown: no key of its own
  const auto groups = group_gpus({keys(0, {in_job(10, "7", "0")}), keys(1, {in_job(11, "7", "1")}),
                                  keys(2, {in_job(20, "8", "0")}), keys(3, {unknown})},
                                 JobGrouping::Auto);
  EXPECT_EQ(groups, (std::vector<std::vector<int>>{{0, 1}, {2}, {3}}));
  EXPECT_FALSE(keys(3, {unknown}).has_job_info);
}

TEST(JobGroups, ParentOneSaysNothing) {
  const auto k = keys(0, {proc(10, {}, {}, {}, 1u)});
  EXPECT_FALSE(k.has_job_info);
}

TEST(JobGroups, ExplicitGroupsWin) {
  const auto groups =
      group_gpus({keys(0, {}), keys(1, {}), keys(2, {})}, JobGrouping::Auto, {{0, 2}});
  EXPECT_EQ(groups, (std::vector<std::vector<int>>{{0, 2}, {1}}));
}

TEST(JobGroups, ModeIds) {
  EXPECT_EQ(job_grouping_from_id("all"), JobGrouping::AllWatched);
  EXPECT_EQ(job_grouping_id(JobGrouping::ByProcess), "process");
  EXPECT_FALSE(job_grouping_from_id("node").has_value());
}

}  // namespace
}  // namespace gpulens::diagnosis

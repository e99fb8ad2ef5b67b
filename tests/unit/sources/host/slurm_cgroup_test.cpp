// SPDX-License-Identifier: Apache-2.0
// Slurm's cgroup layouts (cgroup/v1 and cgroup/v2 plugins) and what is not one.
#include "sources/host/slurm_cgroup.hpp"

#include <gtest/gtest.h>

#include "sources/host/cgroup_parse.hpp"
#include "sources/host/slurm_ids.hpp"

namespace gpulens::sources {
namespace {

using Kind = SlurmCgroup::Kind;

TEST(SlurmCgroup, V1JobStepAndUid) {
  const auto s = parse_slurm_cgroup_path("/slurm/uid_1000/job_4102/step_batch/task_0");
  EXPECT_EQ(s.kind, Kind::Job);
  EXPECT_EQ(s.job, "4102");
  EXPECT_EQ(s.step, "batch");
  EXPECT_EQ(s.uid, 1000u);
  // Several slurmd on one host: the hierarchy root carries the node's name.
  const auto multi = parse_slurm_cgroup_path("/slurm_gpu01/uid_7/job_5/step_3/task_1");
  EXPECT_EQ(multi.kind, Kind::Job);
  EXPECT_EQ(multi.job, "5");
  EXPECT_EQ(multi.step, "3");
  // The job's own cgroup (no step yet).
  EXPECT_EQ(parse_slurm_cgroup_path("/slurm/uid_7/job_5").kind, Kind::Job);
}

TEST(SlurmCgroup, V2JobAndStep) {
  const auto s =
      parse_slurm_cgroup_path("/system.slice/slurmstepd.scope/job_4103/step_0/user/task_1");
  EXPECT_EQ(s.kind, Kind::Job);
  EXPECT_EQ(s.job, "4103");
  EXPECT_EQ(s.step, "0");
  EXPECT_FALSE(s.uid.has_value());  // v2 keeps no uid in the path
  for (const char* path : {"/system.slice/gpu01_slurmstepd.scope/job_9/step_extern/user",
                           "/slurmstepd.scope/job_9/step_interactive/user/task_special",
                           "/system.slice/slurmstepd.scope/job_9/step_2/slurm",
                           "/system.slice/slurmstepd.scope/job_9/step_2/user/task_0 (deleted)"}) {
    const auto x = parse_slurm_cgroup_path(path);
    EXPECT_EQ(x.kind, Kind::Job) << path;
    EXPECT_EQ(x.job, "9") << path;
  }
}

TEST(SlurmCgroup, DaemonsAndOtherPathsAreNoJob) {
  EXPECT_EQ(parse_slurm_cgroup_path("/system.slice/slurmstepd.scope/system").kind, Kind::Daemon);
  EXPECT_EQ(parse_slurm_cgroup_path("/system.slice/slurmstepd.scope").kind, Kind::Daemon);
  EXPECT_EQ(parse_slurm_cgroup_path("/slurm").kind, Kind::Daemon);
  for (const char* path : {"/", "/system.slice/slurmd.service", "/user.slice/user-1000.slice",
                           "/kubepods/burstable/pod1234/abc", "/job_5/step_0",
                           "/myslurm/uid_1/job_2", "/system.slice/xslurmstepd.scope/job_3"}) {
    EXPECT_EQ(parse_slurm_cgroup_path(path).kind, Kind::None) << path;
  }
}

TEST(SlurmCgroup, UnknownLayoutsUnderASlurmAnchor) {
  for (const char* path : {"/system.slice/slurmstepd.scope/job_hello/step_0",
                           "/system.slice/slurmstepd.scope/job_4106/weird/user",
                           "/system.slice/slurmstepd.scope/job_0/step_0",
                           "/system.slice/slurmstepd.scope/job_99999999999/step_0",
                           "/system.slice/slurmstepd.scope/job_7/step_bogus",
                           "/system.slice/slurmstepd.scope/elsewhere", "/slurm/uid_x/job_1",
                           "/slurm/uid_1/task_0", "/slurm/uid_1"}) {
    const auto s = parse_slurm_cgroup_path(path);
    EXPECT_EQ(s.kind, Kind::UnknownLayout) << path;
    EXPECT_TRUE(s.job.empty()) << path;
  }
}

TEST(SlurmCgroup, IdsAreCheckedAndCanonical) {
  EXPECT_EQ(valid_slurm_job_id("007"), "7");
  EXPECT_EQ(valid_slurm_job_id("4294967293"), "4294967293");
  EXPECT_FALSE(valid_slurm_job_id("4294967294"));  // NO_VAL
  EXPECT_FALSE(valid_slurm_job_id("0"));
  EXPECT_FALSE(valid_slurm_job_id("-1"));
  EXPECT_FALSE(valid_slurm_job_id("12abc"));
  EXPECT_FALSE(valid_slurm_job_id(""));
  EXPECT_FALSE(valid_slurm_job_id("00000000001"));  // 11 digits
  EXPECT_EQ(valid_slurm_step("batch"), "batch");
  EXPECT_FALSE(valid_slurm_step("Batch"));
  EXPECT_EQ(valid_slurm_number("0"), "0");
  EXPECT_EQ(valid_slurm_name("physics"), "physics");
  EXPECT_FALSE(valid_slurm_name("two words"));
  EXPECT_FALSE(valid_slurm_name("tab\there"));
  EXPECT_FALSE(valid_slurm_name(std::string(kMaxSlurmNameBytes + 1, 'a')));
  EXPECT_TRUE(valid_slurm_name(std::string(kMaxSlurmNameBytes, 'a')));
}

TEST(SlurmCgroup, WholeFileV1TakesTheLineWithAJob) {
  // Under v1 only the controllers Slurm manages carry the job; the others sit in
  // slurmd's service or at the root.
  const auto info = parse_pid_cgroup(
      "4:pids:/system.slice/slurmd.service\n"
      "11:memory:/slurm/uid_1000/job_42/step_0/task_0\n"
      "1:name=systemd:/system.slice/slurmd.service\n0::/\n");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->slurm.kind, Kind::Job);
  EXPECT_EQ(info->slurm.job, "42");
  // A job on a later line beats an odd path on an earlier one.
  const auto mixed =
      parse_pid_cgroup("5:cpuset:/slurm/uid_1/oops\n11:memory:/slurm/uid_1/job_43/step_0\n");
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->slurm.job, "43");
  const auto odd = parse_pid_cgroup("5:cpuset:/slurm/uid_1/oops\n0::/\n");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->slurm.kind, Kind::UnknownLayout);
}

TEST(SlurmCgroup, ContainerInsideAJobKeepsBoth) {
  // A container started inside a job's step (enroot/podman run by the job).
  const std::string id(64, 'a');
  const auto info = parse_pid_cgroup(
      "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0/libpod-" + id + ".scope\n");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->container, id);
  EXPECT_EQ(info->slurm.job, "77");
}

}  // namespace
}  // namespace gpulens::sources

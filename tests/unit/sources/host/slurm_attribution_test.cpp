// SPDX-License-Identifier: Apache-2.0
// Which of cgroup and environment names a process's Slurm job, and what is counted.
#include "sources/host/slurm_attribution.hpp"

#include <gtest/gtest.h>

#include <cerrno>

namespace gpulens::sources {
namespace {

SlurmCgroup cgroup_job(const std::string& job, const std::string& step) {
  SlurmCgroup c;
  c.kind = SlurmCgroup::Kind::Job;
  c.job = job;
  c.step = step;
  return c;
}

SlurmEnviron environ_job(const std::string& job) {
  SlurmEnviron e;
  e.job = job;
  // Appended, not assigned: GCC 12 at -O3 warns falsely (-Wrestrict) on a
  // literal assigned to a member of an inlined struct.
  e.step += "3";
  e.user += "alice";
  e.account += "physics";
  e.array_job += "40";
  e.array_task += "2";
  return e;
}

int problem_count(const SlurmAttribution& a) {
  int n = 0;
  for (bool b : a.problems) n += b ? 1 : 0;
  return n;
}

// The environment's claim, which confirm_slurm_jobs keeps only where Slurm's
// allocation lists the job; its user and account are not taken (anyone's to set).
TEST(SlurmAttribution, EnvironmentAloneNamesTheJob) {
  const auto a = attribute_slurm({{}, environ_job("41"), 0, false}, "", "uid-user");
  ASSERT_TRUE(a.job);
  EXPECT_EQ(a.job->job, "41");
  EXPECT_EQ(a.job->step, "3");
  EXPECT_EQ(a.job->user, "uid-user");
  EXPECT_EQ(a.job->account, "");
  EXPECT_EQ(a.job->array_job, "40");
  EXPECT_EQ(a.job->from, "environ");
  EXPECT_EQ(problem_count(a), 0);
}

TEST(SlurmAttribution, CgroupAloneNamesTheJobWithTheUidsUser) {
  const auto a = attribute_slurm({cgroup_job("42", "0"), SlurmEnviron{}, 0, false}, "", "bob");
  ASSERT_TRUE(a.job);
  EXPECT_EQ(a.job->job, "42");
  EXPECT_EQ(a.job->step, "0");
  EXPECT_EQ(a.job->user, "bob");
  EXPECT_EQ(a.job->account, "");
  EXPECT_EQ(a.job->from, "cgroup");
  // v1's uid_<n> is the job's owner, whoever the process runs as.
  EXPECT_EQ(
      attribute_slurm({cgroup_job("42", "0"), SlurmEnviron{}, 0, false}, "carol", "bob").job->user,
      "carol");
}

TEST(SlurmAttribution, AgreeingEnvironmentAddsWhatTheCgroupLacks) {
  const auto a = attribute_slurm({cgroup_job("41", "0"), environ_job("41"), 0, false}, "", "bob");
  ASSERT_TRUE(a.job);
  EXPECT_EQ(a.job->step, "0");    // the cgroup's step
  EXPECT_EQ(a.job->user, "bob");  // the process's owner: SLURM_JOB_USER is anyone's to set
  EXPECT_EQ(a.job->account, "");  // Slurm's records give it (confirm_slurm_jobs)
  EXPECT_EQ(a.job->array_task, "2");
  EXPECT_EQ(a.job->from, "cgroup");
  EXPECT_EQ(problem_count(a), 0);
}

TEST(SlurmAttribution, DisagreeingEnvironmentLosesAndIsCounted) {
  const auto a = attribute_slurm({cgroup_job("42", "1"), environ_job("9999"), 0, false}, "", "bob");
  ASSERT_TRUE(a.job);
  EXPECT_EQ(a.job->job, "42");
  EXPECT_EQ(a.job->step, "1");
  EXPECT_EQ(a.job->user, "bob");  // not the environment's claim
  EXPECT_EQ(a.job->account, "");
  EXPECT_EQ(a.job->array_job, "");
  EXPECT_TRUE(a.has(SlurmProblem::EnvironCgroupDisagree));
  EXPECT_EQ(problem_count(a), 1);
}

TEST(SlurmAttribution, UnreadableOrGoneEnvironment) {
  const auto denied =
      attribute_slurm({cgroup_job("42", "0"), std::nullopt, EACCES, false}, "", "bob");
  ASSERT_TRUE(denied.job);
  EXPECT_EQ(denied.job->job, "42");
  EXPECT_TRUE(denied.has(SlurmProblem::EnvironUnreadable));
  const auto gone = attribute_slurm({{}, std::nullopt, ENOENT, false}, "", "bob");
  EXPECT_FALSE(gone.job);
  EXPECT_TRUE(gone.has(SlurmProblem::EnvironGone));
  EXPECT_TRUE(
      attribute_slurm({{}, std::nullopt, ESRCH, false}, "", "").has(SlurmProblem::EnvironGone));
}

TEST(SlurmAttribution, SignsOfSlurmWithoutAJobAreUnknown) {
  SlurmEnviron bad;
  bad.job_malformed = true;
  const auto a = attribute_slurm({{}, bad, 0, false}, "", "bob");
  ASSERT_TRUE(a.job);
  EXPECT_EQ(a.job->job, "");
  EXPECT_EQ(a.job->unknown, "malformed SLURM_JOB_ID");
  EXPECT_EQ(a.job->user, "bob");
  EXPECT_TRUE(a.has(SlurmProblem::MalformedJobId));

  SlurmCgroup odd;
  odd.kind = SlurmCgroup::Kind::UnknownLayout;
  const auto b = attribute_slurm({odd, SlurmEnviron{}, 0, false}, "", "bob");
  ASSERT_TRUE(b.job);
  EXPECT_EQ(b.job->unknown, "Slurm cgroup of an unknown layout");
  EXPECT_TRUE(b.has(SlurmProblem::UnknownCgroupLayout));
  // The environment still names the job where the cgroup cannot.
  const auto c = attribute_slurm({odd, environ_job("43"), 0, false}, "", "bob");
  ASSERT_TRUE(c.job);
  EXPECT_EQ(c.job->job, "43");
  EXPECT_TRUE(c.has(SlurmProblem::UnknownCgroupLayout));
}

TEST(SlurmAttribution, TruncatedEnvironmentWithoutAJobIsCounted) {
  EXPECT_TRUE(
      attribute_slurm({{}, SlurmEnviron{}, 0, true}, "", "").has(SlurmProblem::EnvironTruncated));
  EXPECT_FALSE(
      attribute_slurm({{}, environ_job("5"), 0, true}, "", "").has(SlurmProblem::EnvironTruncated));
}

TEST(SlurmAttribution, NoSignOfSlurm) {
  const auto a = attribute_slurm({{}, SlurmEnviron{}, 0, false}, "", "bob");
  EXPECT_FALSE(a.job);
  EXPECT_EQ(problem_count(a), 0);
  SlurmCgroup daemon;
  daemon.kind = SlurmCgroup::Kind::Daemon;
  EXPECT_FALSE(attribute_slurm({daemon, SlurmEnviron{}, 0, false}, "", "bob").job);
  for (std::size_t i = 0; i < kSlurmProblemCount; ++i) {
    EXPECT_NE(slurm_problem_id(static_cast<SlurmProblem>(i)), "unknown");
  }
}

}  // namespace
}  // namespace gpulens::sources

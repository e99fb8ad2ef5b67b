// SPDX-License-Identifier: Apache-2.0
// SLURM_* variables out of a NUL-separated /proc/PID/environ.
#include "sources/host/slurm_environ.hpp"

#include <gtest/gtest.h>

#include <string>

#include "sources/host/slurm_ids.hpp"

namespace gpulens::sources {
namespace {

std::string environ_of(std::initializer_list<std::string> entries) {
  std::string out;
  for (const auto& e : entries) {
    out += e;
    out += '\0';
  }
  return out;
}

TEST(SlurmEnviron, ReadsTheJobVariables) {
  const auto env = parse_slurm_environ(
      environ_of({"HOME=/home/alice", "SLURM_JOB_ID=4101", "SLURM_STEP_ID=0",
                  "SLURM_JOB_USER=alice", "SLURM_JOB_ACCOUNT=physics", "SLURM_ARRAY_JOB_ID=4100",
                  "SLURM_ARRAY_TASK_ID=0", "SLURM_JOB_NAME=ignored", "PATH=/usr/bin"}));
  EXPECT_EQ(env.job, "4101");
  EXPECT_EQ(env.step, "0");
  EXPECT_EQ(env.user, "alice");
  EXPECT_EQ(env.account, "physics");
  EXPECT_EQ(env.array_job, "4100");
  EXPECT_EQ(env.array_task, "0");
  EXPECT_FALSE(env.job_malformed);
  EXPECT_FALSE(env.value_malformed);
}

TEST(SlurmEnviron, NoSlurmNoJob) {
  EXPECT_EQ(parse_slurm_environ(environ_of({"PATH=/usr/bin", "SLURMISH=1"})), SlurmEnviron{});
  EXPECT_EQ(parse_slurm_environ(""), SlurmEnviron{});
}

TEST(SlurmEnviron, OlderNamesOnlyWhereTheCurrentOnesAreAbsent) {
  EXPECT_EQ(parse_slurm_environ(environ_of({"SLURM_JOBID=5", "SLURM_STEPID=1"})).job, "5");
  const auto both =
      parse_slurm_environ(environ_of({"SLURM_JOBID=5", "SLURM_JOB_ID=6", "SLURM_STEPID=1"}));
  EXPECT_EQ(both.job, "6");
  EXPECT_EQ(both.step, "1");
}

TEST(SlurmEnviron, FirstEntryOfANameWinsAsForGetenv) {
  const auto env = parse_slurm_environ(environ_of({"SLURM_JOB_ID=7", "SLURM_JOB_ID=8"}));
  EXPECT_EQ(env.job, "7");
  // A malformed first entry is not rescued by a later one.
  const auto bad = parse_slurm_environ(environ_of({"SLURM_JOB_ID=x", "SLURM_JOB_ID=8"}));
  EXPECT_TRUE(bad.job.empty());
  EXPECT_TRUE(bad.job_malformed);
}

TEST(SlurmEnviron, MalformedValuesAreDroppedAndSaid) {
  for (const char* id : {"12abc", "", "-3", "0", "99999999999", "4294967295", " 12"}) {
    const auto env = parse_slurm_environ(environ_of({std::string("SLURM_JOB_ID=") + id}));
    EXPECT_TRUE(env.job.empty()) << id;
    EXPECT_TRUE(env.job_malformed) << id;
  }
  const auto env = parse_slurm_environ(
      environ_of({"SLURM_JOB_ID=9", "SLURM_JOB_ACCOUNT=" + std::string(kMaxSlurmNameBytes + 1, 'a'),
                  "SLURM_JOB_USER=bad\x01name", "SLURM_STEP_ID=twelve"}));
  EXPECT_EQ(env.job, "9");
  EXPECT_TRUE(env.account.empty());
  EXPECT_TRUE(env.user.empty());
  EXPECT_TRUE(env.step.empty());
  EXPECT_TRUE(env.value_malformed);
  EXPECT_FALSE(env.job_malformed);
}

TEST(SlurmEnviron, ACutOffLastEntryIsNotRead) {
  // The read cap stopped mid-value: "SLURM_JOB_ID=12" may be the start of 1234.
  std::string raw = environ_of({"A=1"}) + "SLURM_JOB_ID=12";
  EXPECT_TRUE(parse_slurm_environ(raw, true).job.empty());
  EXPECT_EQ(parse_slurm_environ(raw, false).job, "12");  // a file without a final NUL
}

}  // namespace
}  // namespace gpulens::sources

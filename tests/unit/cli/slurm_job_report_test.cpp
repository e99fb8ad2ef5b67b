// SPDX-License-Identifier: Apache-2.0
// `gpulens report --slurm-job ID`'s argument: an id as squeue and sacct print
// it, made canonical; an array task or a step refused with the id to give
// instead, and an id too long to echo cut short.
#include "cli/slurm_job_report.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "cli_support.hpp"

namespace gpulens::cli {
namespace {

using gpulens::testing::run_gpulens;

TEST(SlurmJobReportCli, TheIdIsCheckedAsSlurmPrintsIt) {
  struct Case {
    const char* id;
    const char* says;
  };
  for (const auto& c :
       {Case{"12abc", "'12abc' is not a Slurm job id (1 to 10 digits"},
        Case{"0", "'0' is not a Slurm job id"}, Case{"4294967294", "is not a Slurm job id"},
        Case{"123_4",
             "an array task has a job id of its own: `sacct -X -n -o "
             "JobIDRaw -j 123_4`"},
        Case{"123.0", "give the job, not one of its steps: 123"}}) {
    const auto r = run_gpulens(fmt::format("report --db /nonexistent/h.db --slurm-job '{}'", c.id));
    EXPECT_EQ(r.exit_code, 2) << c.id;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.id << ": " << r.err;
  }
  auto r = run_gpulens("report --slurm-job 5 --from -1h");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("leave out the recording, --from, --to and --gpus"), std::string::npos)
      << r.err;
  r = run_gpulens("report --slurm-job 5 --gpus 1");
  EXPECT_EQ(r.exit_code, 2);
  r = run_gpulens("report --slurm-job 5 --db /nonexistent/gpulens/history.db");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no history database at /nonexistent/gpulens/history.db"), std::string::npos)
      << r.err;
  r = run_gpulens("report --help");
  EXPECT_NE(r.out.find("--slurm-job"), std::string::npos);
}

// Issue 47 (small): a 100,000-digit id was echoed whole in the error.
TEST(SlurmJobReportCli, AHugeIdIsNotEchoedWhole) {
  const auto r = run_gpulens(
      fmt::format("report --db /nonexistent/h.db --slurm-job '{}'", std::string(100'000, '9')));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("... (100000 bytes)' is not a Slurm job id"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 1000u);
}

TEST(SlurmJobReportCli, AnIdIsMadeCanonicalOrRefusedWithAHint) {
  const auto id = parse_slurm_job_arg("007");
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "7");
  EXPECT_EQ(*parse_slurm_job_arg("4294967293"), "4294967293");
  const auto step = parse_slurm_job_arg("42.batch");
  ASSERT_FALSE(step);
  EXPECT_EQ(step.error().message,
            "--slurm-job '42.batch' is not a Slurm job id (1 to 10 digits, 1 to 4294967293, as "
            "squeue and sacct print it); give the job, not one of its steps: 42");
  const auto task = parse_slurm_job_arg("42_3");
  ASSERT_FALSE(task);
  EXPECT_NE(task.error().message.find("`sacct -X -n -o JobIDRaw -j 42_3` prints it"),
            std::string::npos)
      << task.error().message;
  // No hint where the part before the separator is no job id either.
  const auto neither = parse_slurm_job_arg("x_3");
  ASSERT_FALSE(neither);
  EXPECT_TRUE(neither.error().message.ends_with("as squeue and sacct print it)"))
      << neither.error().message;
  EXPECT_FALSE(parse_slurm_job_arg(""));
  EXPECT_FALSE(parse_slurm_job_arg("_3"));
}

}  // namespace
}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
// HostCollector on tests/fixtures/proc/slurm (its README lists each process): the
// Slurm job of each, and the reasons counted where it could not be told.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "sources/host/host_collector.hpp"

namespace gpulens::sources {
namespace {

namespace fs = std::filesystem;

class SlurmProc {
 public:
  SlurmProc() {
    std::string tmpl = (fs::temp_directory_path() / "gpulens-slurm-XXXXXX").string();
    root_ = ::mkdtemp(tmpl.data());
    fs::copy(fs::path(GPULENS_FIXTURES) / "proc" / "slurm", root_, fs::copy_options::recursive);
  }
  ~SlurmProc() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  SlurmProc(const SlurmProc&) = delete;
  SlurmProc& operator=(const SlurmProc&) = delete;
  fs::path path(const std::string& rel) const { return fs::path(root_) / rel; }
  // A process of its own: 2001's stat and status under another PID.
  void clone_process(int pid, const std::string& cgroup) {
    fs::create_directories(path(std::to_string(pid)));
    for (const char* f : {"stat", "status"}) {
      std::ifstream in(path("2001") / f);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      text.replace(0, 4, std::to_string(pid));  // the stat line's leading PID
      std::ofstream(path(std::to_string(pid)) / f) << text;
    }
    std::ofstream(path(std::to_string(pid)) / "cgroup") << cgroup;
  }
  HostOptions options() const { return {root_, false}; }

 private:
  std::string root_;
};

std::map<std::uint32_t, ProcessSample> enrich(HostCollector& host,
                                              std::initializer_list<std::uint32_t> pids) {
  std::vector<ProcessSample> procs;
  for (const auto pid : pids) {
    ProcessSample p;
    p.pid = pid;
    procs.push_back(std::move(p));
  }
  host.enrich(procs, 100.0);
  std::map<std::uint32_t, ProcessSample> out;
  for (auto& p : procs) out[p.pid] = std::move(p);
  return out;
}

std::uint64_t count(const HostCollector& host, SlurmProblem p) {
  return host.slurm_problems()[static_cast<std::size_t>(p)];
}

TEST(SlurmCollector, EachLayoutAndPrecedenceOnTheFixtureTree) {
  SlurmProc proc;
  HostCollector host(proc.options());
  auto p = enrich(host, {2001, 2002, 2003, 2004, 2005, 2006, 2007, 2008, 2009});
  ASSERT_TRUE(host.unresolved().empty());

  // Environment only (no Slurm cgroup).
  ASSERT_TRUE(p[2001].slurm);
  EXPECT_EQ(*p[2001].slurm, (SlurmJob{"4101", "0", "3999999999", "", "", "", "environ", ""}));
  // cgroup v1: the job's owner from uid_<n>; the array from the agreeing environment,
  // not its account (anyone's to set: Slurm's allocation gives it).
  ASSERT_TRUE(p[2002].slurm);
  EXPECT_EQ(*p[2002].slurm,
            (SlurmJob{"4102", "batch", "3999999998", "", "4100", "2", "cgroup", ""}));
  EXPECT_EQ(p[2002].user, "3999999999");  // the process's own user is unchanged
  // cgroup v2 alone.
  ASSERT_TRUE(p[2003].slurm);
  EXPECT_EQ(*p[2003].slurm, (SlurmJob{"4103", "0", "3999999999", "", "", "", "cgroup", ""}));
  // Both, disagreeing: the cgroup wins and nothing of the environment is taken.
  ASSERT_TRUE(p[2004].slurm);
  EXPECT_EQ(*p[2004].slurm, (SlurmJob{"4104", "1", "3999999999", "", "", "", "cgroup", ""}));
  // Malformed SLURM_JOB_ID: unknown, not a crash and not job 12.
  ASSERT_TRUE(p[2005].slurm);
  EXPECT_EQ(p[2005].slurm->job, "");
  EXPECT_EQ(p[2005].slurm->unknown, "malformed SLURM_JOB_ID");
  // A Slurm cgroup of an unknown layout.
  ASSERT_TRUE(p[2006].slurm);
  EXPECT_EQ(p[2006].slurm->unknown, "Slurm cgroup of an unknown layout");
  // No environ file (the process exited): the cgroup still names the job.
  ASSERT_TRUE(p[2007].slurm);
  EXPECT_EQ(p[2007].slurm->job, "4107");
  // Both, agreeing: the cgroup's step; the process owner, not SLURM_JOB_USER.
  ASSERT_TRUE(p[2008].slurm);
  EXPECT_EQ(*p[2008].slurm, (SlurmJob{"4108", "2", "3999999999", "", "", "", "cgroup", ""}));
  EXPECT_FALSE(p[2009].slurm);

  EXPECT_EQ(count(host, SlurmProblem::EnvironGone), 1u);            // 2007
  EXPECT_EQ(count(host, SlurmProblem::MalformedJobId), 1u);         // 2005
  EXPECT_EQ(count(host, SlurmProblem::MalformedValue), 1u);         // 2005's account
  EXPECT_EQ(count(host, SlurmProblem::UnknownCgroupLayout), 1u);    // 2006
  EXPECT_EQ(count(host, SlurmProblem::EnvironCgroupDisagree), 1u);  // 2004
  EXPECT_EQ(count(host, SlurmProblem::EnvironUnreadable), 0u);
  EXPECT_EQ(count(host, SlurmProblem::EnvironTruncated), 0u);

  // Counted once per process, not per tick: the next tick reads from the cache.
  (void)enrich(host, {2004, 2005});
  EXPECT_EQ(count(host, SlurmProblem::EnvironCgroupDisagree), 1u);
}

TEST(SlurmCollector, UnreadableEnvironmentIsCountedAndTheCgroupStillNamesTheJob) {
  SlurmProc proc;
  // Root reads every file, so a directory stands in for EACCES: any read error but
  // "the process has gone" counts as unreadable.
  proc.clone_process(2101, "0::/system.slice/slurmstepd.scope/job_51/step_0/user/task_0\n");
  fs::create_directory(proc.path("2101/environ"));
  HostCollector host(proc.options());
  auto p = enrich(host, {2101});
  ASSERT_TRUE(p[2101].slurm);
  EXPECT_EQ(p[2101].slurm->job, "51");
  EXPECT_EQ(count(host, SlurmProblem::EnvironUnreadable), 1u);
}

TEST(SlurmCollector, EnvironmentIsReadOnlyUpToItsCap) {
  SlurmProc proc;
  proc.clone_process(2102, "0::/user.slice\n");
  proc.clone_process(2103, "0::/user.slice\n");
  const std::string filler = "X=" + std::string(HostCollector::kMaxEnvironBytes, 'x') + '\0';
  {
    // SLURM_JOB_ID past the cap is never seen.
    std::ofstream(proc.path("2102/environ"), std::ios::binary)
        << filler << std::string("SLURM_JOB_ID=61") << '\0';
    // One within it is, even in a large environment.
    std::ofstream(proc.path("2103/environ"), std::ios::binary)
        << std::string("SLURM_JOB_ID=62") << '\0' << filler;
  }
  HostCollector host(proc.options());
  auto p = enrich(host, {2102, 2103});
  EXPECT_FALSE(p[2102].slurm);
  ASSERT_TRUE(p[2103].slurm);
  EXPECT_EQ(p[2103].slurm->job, "62");
  EXPECT_EQ(count(host, SlurmProblem::EnvironTruncated), 1u);
}

}  // namespace
}  // namespace gpulens::sources

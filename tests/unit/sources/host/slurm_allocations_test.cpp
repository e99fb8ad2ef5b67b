// SPDX-License-Identifier: Apache-2.0
// The Slurm prolog's allocation entries: what an entry may hold, how Slurm's GPU
// ids name devices, and which entries the reader trusts (owner, mode, links,
// staleness). Each bad input names no owner and is counted, never a crash.
#include "sources/host/slurm_allocations.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sources/host/slurm_cgroup.hpp"

namespace gpulens::sources {
namespace {

namespace fs = std::filesystem;

constexpr const char* kAllocBoot = "5f7075f7-151f-4fec-a445-1be1e5dbd051";

std::string alloc_entry(const std::string& job, const std::string& gpus,
                        const std::string& boot = kAllocBoot, double start = 1000) {
  return "# gpulens Slurm allocation\njob=" + job + "\nuid=1000\nuser=alice\naccount=physics\n" +
         "partition=gpu\ngpus=" + gpus +
         "\ngpus_from=SLURM_JOB_GPUS\nstart=" + std::to_string(static_cast<long long>(start)) +
         "\nboot_id=" + boot + "\nnode=n1\n";
}

// Two GPUs whose NVML order (index) is not their PCI bus order, as on boards
// where NVML's enumeration and the bus disagree.
std::vector<AllocationDevice> alloc_devices() {
  return {{0, "GPU-aaaa", "00000000:9A:00.0", {}}, {1, "GPU-bbbb", "00000000:18:00.0", {}}};
}

class AllocationDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/gpulens_alloc_XXXXXX";
    root_ = ::mkdtemp(tmpl.data());
    dir_ = root_ + "/slurm-jobs";
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0755);
    std::ofstream(root_ + "/boot_id") << kAllocBoot << "\n";
    options_.dir = dir_;
    options_.boot_id_path = root_ + "/boot_id";
    options_.cgroup_root = root_ + "/cgroup";
    options_.trusted_uid = ::geteuid();
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& name, const std::string& text, mode_t mode = 0644) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
  }
  AllocationScan scan(double now = 1010) {
    SlurmAllocationReader reader(options_, alloc_devices());
    return *reader.read(now);
  }
  std::uint64_t count(const AllocationScan& s, AllocationProblem p) {
    return s.problems[static_cast<std::size_t>(p)];
  }

  std::string root_, dir_;
  SlurmAllocationOptions options_;
};

TEST(SlurmAllocationEntry, ReadsThePrologsLines) {
  AllocationProblem problem{};
  const auto e = parse_allocation_entry(alloc_entry("4242", "0,1"), "4242", problem);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->job, "4242");
  EXPECT_EQ(e->user, "alice");
  EXPECT_EQ(e->account, "physics");
  EXPECT_EQ(e->partition, "gpu");
  EXPECT_EQ(e->gpus, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(e->uid, 1000u);
  EXPECT_EQ(e->start, 1000.0);
  EXPECT_EQ(e->boot_id, kAllocBoot);
}

TEST(SlurmAllocationEntry, RefusesWhatIsNotTheProlog) {
  AllocationProblem problem{};
  for (const std::string& text : {
           std::string("job=12\ngpus=0\njob=13\n"),    // a key twice
           std::string("job=12\ngpus=0\nnonsense\n"),  // a line without '='
           std::string("job=abc\ngpus=0\n"),           // not a job id
           std::string("job=12\nuser=al ice\n"),       // a name with a space
           std::string("job=12\ngpus=0;rm -rf /\n"),   // not a GPU id
           std::string("job=12\nstart=-5\n"),          // a start before 1970
           std::string("gpus=0\n"),                    // no job
       }) {
    EXPECT_FALSE(parse_allocation_entry(text, "12", problem).has_value()) << text;
    EXPECT_EQ(problem, AllocationProblem::Malformed) << text;
  }
  EXPECT_FALSE(parse_allocation_entry(alloc_entry("12", "0"), "13", problem).has_value());
  EXPECT_EQ(problem, AllocationProblem::NameMismatch);
}

TEST(SlurmAllocationGpus, IndicesFollowThePciBusUuidsMatchExactly) {
  std::string order;
  // Slurm's index 0 is the GPU first on the bus (18:00.0), NVML's index 1.
  EXPECT_EQ(match_slurm_gpu("0", alloc_devices(), order), 1);
  EXPECT_EQ(order, "pci_bus_id");
  EXPECT_EQ(match_slurm_gpu("1", alloc_devices(), order), 0);
  EXPECT_EQ(match_slurm_gpu("GPU-BBBB", alloc_devices(), order), 1);
  EXPECT_FALSE(match_slurm_gpu("2", alloc_devices(), order).has_value());
  EXPECT_FALSE(match_slurm_gpu("GPU-cccc", alloc_devices(), order).has_value());
  EXPECT_FALSE(match_slurm_gpu("MIG-aaaa", alloc_devices(), order).has_value());
  // Without distinct bus ids the order falls back to NVML's index, and says so.
  auto no_bus = alloc_devices();
  no_bus[0].pci_bus_id.clear();
  EXPECT_EQ(match_slurm_gpu("0", no_bus, order), 0);
  EXPECT_EQ(order, "nvml_index");
}

TEST_F(AllocationDir, ChargesEachGpuToItsJob) {
  write("4242", alloc_entry("4242", "0"));
  write("4243", alloc_entry("4243", "1"));
  const auto s = scan();
  ASSERT_TRUE(s.usable) << s.fallback;
  EXPECT_EQ(s.jobs, 2u);
  ASSERT_EQ(s.by_gpu.count(1), 1u);
  ASSERT_EQ(s.by_gpu.at(1).size(), 1u);
  EXPECT_EQ(s.by_gpu.at(1)[0].job, "4242");  // Slurm's 0 is NVML's 1 (bus order)
  EXPECT_EQ(s.by_gpu.at(1)[0].account, "physics");
  EXPECT_EQ(s.by_gpu.at(0)[0].job, "4243");
  EXPECT_EQ(s.index_order, "pci_bus_id");
}

TEST_F(AllocationDir, AMissingDirectoryFallsBackAndSaysWhy) {
  fs::remove_all(dir_);
  const auto s = scan();
  EXPECT_FALSE(s.usable);
  EXPECT_NE(s.fallback.find("does not exist"), std::string::npos) << s.fallback;
}

TEST_F(AllocationDir, ADirectoryOthersCanWriteNamesNoOwner) {
  write("4242", alloc_entry("4242", "0"));
  ::chmod(dir_.c_str(), 0777);
  const auto s = scan();
  EXPECT_FALSE(s.usable);
  EXPECT_TRUE(s.by_gpu.empty());
  EXPECT_NE(s.fallback.find("no one else can write"), std::string::npos) << s.fallback;
}

TEST_F(AllocationDir, AnotherOwnersDirectoryNamesNoOwner) {
  options_.trusted_uid = ::geteuid() + 1;
  write("4242", alloc_entry("4242", "0"));
  const auto s = scan();
  EXPECT_FALSE(s.usable);
  EXPECT_TRUE(s.by_gpu.empty());
}

TEST_F(AllocationDir, UntrustedLinkedOrMalformedEntriesAreSkippedAndCounted) {
  write("4242", alloc_entry("4242", "0"), 0666);         // others may write it
  write("4243", alloc_entry("4243", "0") + "user=x\n");  // a key twice
  write("4244", alloc_entry("4245", "0"));               // named for another job
  write("4246", alloc_entry("4246", "7"));               // no such GPU
  write("target", alloc_entry("4247", "1"));
  fs::create_symlink(dir_ + "/target", dir_ + "/4247");  // a link
  fs::create_directory(dir_ + "/4248");                  // a directory
  const auto s = scan();
  ASSERT_TRUE(s.usable);
  EXPECT_EQ(count(s, AllocationProblem::Untrusted), 1u);
  EXPECT_EQ(count(s, AllocationProblem::Malformed), 1u);  // 4243
  EXPECT_EQ(count(s, AllocationProblem::NotAFile), 2u);
  EXPECT_EQ(count(s, AllocationProblem::UnknownGpu), 1u);
  EXPECT_EQ(count(s, AllocationProblem::NameMismatch), 2u);  // 4244, and "target"
  EXPECT_TRUE(s.by_gpu.empty()) << s.by_gpu.begin()->second[0].job;
  EXPECT_FALSE(s.last_problem.empty());
}

TEST_F(AllocationDir, AnEntryFromBeforeTheLastBootIsStale) {
  write("4242", alloc_entry("4242", "0", "00000000-0000-0000-0000-000000000000"));
  const auto s = scan();
  EXPECT_EQ(count(s, AllocationProblem::StaleBoot), 1u);
  EXPECT_TRUE(s.by_gpu.empty());
}

TEST_F(AllocationDir, AJobWithoutItsCgroupEndedOnceItIsOld) {
  // cgroup v2: Slurm keeps jobs under system.slice/slurmstepd.scope.
  const std::string scope = options_.cgroup_root + "/system.slice/slurmstepd.scope";
  fs::create_directories(scope + "/job_4243");
  write("4242", alloc_entry("4242", "0", kAllocBoot, 1000));
  write("4243", alloc_entry("4243", "1", kAllocBoot, 1000));
  // Young: the job's first step has not made its cgroup yet.
  auto s = scan(1000 + options_.cgroup_grace_s / 2);
  EXPECT_EQ(s.jobs, 2u);
  s = scan(1000 + options_.cgroup_grace_s * 2);
  EXPECT_EQ(s.jobs, 1u);
  EXPECT_EQ(count(s, AllocationProblem::JobEnded), 1u);
  ASSERT_EQ(s.by_gpu.count(0), 1u);
  EXPECT_EQ(s.by_gpu.at(0)[0].job, "4243");
}

TEST_F(AllocationDir, TwoJobsMayShareAGpu) {
  // Slurm's shard and MPS gres: both jobs hold it, neither alone.
  write("4242", alloc_entry("4242", "0"));
  write("4243", alloc_entry("4243", "0"));
  const auto s = scan();
  ASSERT_EQ(s.by_gpu.count(1), 1u);
  EXPECT_EQ(s.by_gpu.at(1).size(), 2u);
}

TEST_F(AllocationDir, RescansOnlyWhenDue) {
  SlurmAllocationReader reader(options_, alloc_devices());
  EXPECT_EQ(reader.read(1000)->jobs, 0u);
  write("4242", alloc_entry("4242", "0"));
  EXPECT_EQ(reader.read(1000 + options_.rescan_s / 2)->jobs, 0u);
  EXPECT_EQ(reader.read(1000 + options_.rescan_s)->jobs, 1u);
}

// The trust rule: the environment's job counts where Slurm's allocation lists it,
// and then user and account are Slurm's; a cgroup's job stands on its own.
TEST(SlurmConfirm, TheEnvironmentCountsOnlyWhereSlurmsAllocationListsTheJob) {
  AllocationScan held;
  held.usable = true;
  held.by_gpu[0] = {{"slurm", "41", "alice", "physics", "gpu", 1.0, "", "", ""}};
  const auto proc = [](std::uint32_t pid, const std::string& job, const std::string& from) {
    ProcessSample p;
    p.pid = pid;
    p.user = "mallory";
    p.slurm = SlurmJob{job, "0", "mallory", "", "", "", from, ""};
    return p;
  };
  std::vector<ProcessSample> procs = {proc(1, "41", "environ"), proc(2, "42", "environ"),
                                      proc(3, "43", "cgroup"), proc(4, "41", "cgroup"),
                                      proc(5, "41", "environ")};
  procs[0].user = "alice";  // the job's own user
  confirm_slurm_jobs(procs, &held);
  // Job 41's id in another user's process: that user cannot charge alice's job.
  EXPECT_EQ(procs[4].slurm->job, "");
  EXPECT_NE(procs[4].slurm->unknown.find("runs as mallory"), std::string::npos);
  EXPECT_EQ(procs[0].slurm->job, "41");  // listed: confirmed, Slurm's names
  EXPECT_EQ(procs[0].slurm->user, "alice");
  EXPECT_EQ(procs[0].slurm->account, "physics");
  EXPECT_EQ(procs[1].slurm->job, "");  // a claim no one confirms: no job
  EXPECT_NE(procs[1].slurm->unknown.find("SLURM_JOB_ID=42"), std::string::npos);
  EXPECT_EQ(procs[2].slurm->job, "43");  // the cgroup's word stands
  EXPECT_EQ(procs[2].slurm->account, "");
  EXPECT_EQ(procs[3].slurm->account, "physics");
  // Without a prolog (no allocation read) the environment alone names no job.
  std::vector<ProcessSample> alone = {proc(5, "41", "environ")};
  confirm_slurm_jobs(alone, nullptr);
  EXPECT_EQ(alone[0].slurm->job, "");
}

TEST(SlurmConfirm, ALookAlikeCgroupBelowSlurmsRootIsNoJob) {
  // systemd's user delegation lets anyone make these names under their own slice.
  for (const char* path :
       {"/user.slice/user-1000.slice/user@1000.service/app.slice/slurmstepd.scope/job_5/step_0",
        "/user.slice/user-1000.slice/user@1000.service/slurm/uid_0/job_5/step_0",
        "/kubepods/pod1/system.slice/slurmstepd.scope/job_5/step_0"}) {
    EXPECT_EQ(parse_slurm_cgroup_path(path).kind, SlurmCgroup::Kind::UnknownLayout) << path;
  }
}

}  // namespace
}  // namespace gpulens::sources

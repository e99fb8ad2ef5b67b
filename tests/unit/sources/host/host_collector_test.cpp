// SPDX-License-Identifier: Apache-2.0
// HostCollector on the fixture trees: tests/fixtures/proc/t0 is copied into a temp dir,
// and t1 (only the files that change) is laid over it between calls.
//
// Hand-computed from the fixtures, t0 -> t1 (1 s apart):
//   host: busy +175 jiffies, idle +225 -> 175 / 400 = 43.75 %
//         cores 0..3: +100/+0, +50/+50, +25/+75, +0/+100 -> 100, 50, 25, 0 %
//         (cpu0 also gains 30 guest jiffies, already inside user: not counted twice)
//   1001: utime+stime 6000 -> 6200 = 200 ticks = 2 s of CPU in 1 s -> 200 % at 100 Hz
//   1002: 150 -> 175 = 25 ticks -> 25 %;  1004: unchanged -> 0 %;  1005: +1 tick -> 1 %
//   1003: starttime 150000 -> 170000: the PID was reused by another process
#include "sources/host/host_collector.hpp"

#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpulens::sources {
namespace {

namespace fs = std::filesystem;

const std::string kDocker = "d548c5b83fa61d8e3bd86ad42a7ffea9b7c86e3f9d8095c1577d3e1270bb9420";
const std::string kContainerd = "2397d068a8d1552a4c3f9147ba9c94e086bfd66fb2acb5bbaf47197105127d5f";
const std::string kCrio = "c64064614423cb790e88b3e5492ff5ccf673b25ae823089f7a60c65cda24d809";
const std::string kCgroupfs = "a6d72562dd560843b909fcbb494fdcaa98c35b789743dbea37e943f9b49836b3";

class TempProc {
 public:
  TempProc() {
    std::string tmpl = (fs::temp_directory_path() / "gpulens-proc-XXXXXX").string();
    root_ = ::mkdtemp(tmpl.data());
    EXPECT_FALSE(root_.empty());
    overlay("t0");
  }
  ~TempProc() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void overlay(const std::string& tree) {
    fs::copy(fs::path(GPULENS_FIXTURES) / "proc" / tree, root_,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((fs::path(root_) / rel).parent_path());
    std::ofstream(fs::path(root_) / rel, std::ios::binary | std::ios::trunc) << text;
  }
  void remove(const std::string& rel) { fs::remove_all(fs::path(root_) / rel); }
  const std::string& root() const { return root_; }
  HostOptions options(bool with_cmdline = false) const { return {root_, with_cmdline}; }

 private:
  std::string root_;
};

// A minimal but complete /proc/PID/stat line.
std::string stat_line(int pid, const std::string& comm, int utime, int stime, int start) {
  return std::to_string(pid) + " (" + comm + ") S 1 1 1 0 -1 0 0 0 0 0 " + std::to_string(utime) +
         " " + std::to_string(stime) + " 0 0 20 0 1 0 " + std::to_string(start) +
         " 1000 256 18446744073709551615 0\n";
}

std::vector<ProcessSample> procs_of(std::initializer_list<std::uint32_t> pids) {
  std::vector<ProcessSample> out;
  for (const auto pid : pids) {
    ProcessSample p;
    p.pid = pid;
    out.push_back(p);
  }
  return out;
}

double page_size() {
  return static_cast<double>(sysconf(_SC_PAGESIZE));
}

double ticks_to_pct(double ticks, double seconds) {
  return 100.0 * ticks / static_cast<double>(sysconf(_SC_CLK_TCK)) / seconds;
}

TEST(HostCollector, HostCpuFromTwoReadings) {
  TempProc proc;
  HostCollector host(proc.options());
  const auto first = host.sample();
  EXPECT_TRUE(first.error.empty()) << first.error;
  EXPECT_FALSE(first.cpu_pct.has_value());
  EXPECT_TRUE(first.per_core_pct.empty());
  EXPECT_EQ(first.cpu_count, 4);
  EXPECT_DOUBLE_EQ(first.mem_total_mib.value_or(0), 16000.0);
  EXPECT_DOUBLE_EQ(first.mem_available_mib.value_or(0), 8000.0);

  proc.overlay("t1");
  const auto second = host.sample();
  EXPECT_TRUE(second.error.empty()) << second.error;
  EXPECT_DOUBLE_EQ(second.cpu_pct.value_or(-1), 43.75);
  EXPECT_EQ(second.per_core_pct, (std::vector<double>{100, 50, 25, 0}));
  EXPECT_DOUBLE_EQ(second.mem_available_mib.value_or(0), 7000.0);

  // The sampler's per-tick read skips /proc/meminfo.
  const auto cpu_only = host.sample(HostReadings::CpuOnly);
  EXPECT_EQ(cpu_only.cpu_count, 4);
  EXPECT_FALSE(cpu_only.mem_total_mib.has_value());
}

TEST(HostCollector, HostCpuEdgeCases) {
  TempProc proc;
  HostCollector host(proc.options());
  const std::string tail = "intr 0\n";
  proc.write("stat",
             "cpu 100 0 100 1000 500 0 0 0\ncpu0 50 0 50 500 250 0 0 0\n"
             "cpu1 50 0 50 500 250 0 0 0\n" +
                 tail);
  (void)host.sample();
  // No time passed: no figure rather than 0 %.
  EXPECT_FALSE(host.sample().cpu_pct.has_value());
  // iowait went backwards as NO_HZ kernels do (the time moves to idle): +140 idle,
  // -100 iowait and +100 busy make 100 / 140 busy, not a negative idle share.
  proc.write("stat",
             "cpu 150 0 150 1140 400 0 0 0\ncpu0 75 0 75 570 200 0 0 0\n"
             "cpu1 75 0 75 570 200 0 0 0\n" +
                 tail);
  const auto back = host.sample();
  EXPECT_DOUBLE_EQ(back.cpu_pct.value_or(-1), 100.0 * 100 / 140);
  // A core went offline: the total still counts, per-core positions would lie.
  proc.write("stat", "cpu 250 0 150 1240 400 0 0 0\ncpu0 175 0 75 670 200 0 0 0\n" + tail);
  const auto hotplug = host.sample();
  EXPECT_DOUBLE_EQ(hotplug.cpu_pct.value_or(-1), 50.0);
  EXPECT_TRUE(hotplug.per_core_pct.empty());
  EXPECT_EQ(hotplug.cpu_count, 1);
}

TEST(HostCollector, UnreadableOrMalformedFilesAreReportedNotZero) {
  TempProc proc;
  proc.remove("meminfo");
  proc.write("stat", "cpu 1 2\n");
  HostCollector host(proc.options());
  const auto snap = host.sample();
  EXPECT_FALSE(snap.cpu_count.has_value());
  EXPECT_FALSE(snap.mem_total_mib.has_value());
  EXPECT_NE(snap.error.find("stat"), std::string::npos) << snap.error;
  EXPECT_NE(snap.error.find("meminfo"), std::string::npos) << snap.error;
}

TEST(HostCollector, ProcessIdentityAndCpuFromTwoReadings) {
  TempProc proc;
  HostCollector host(proc.options());
  auto procs = procs_of({1001, 1002, 1004, 1005});
  host.enrich(procs, 100.0);
  EXPECT_TRUE(host.unresolved().empty());
  for (const auto& p : procs) EXPECT_FALSE(p.cpu_pct.has_value()) << p.pid;  // first sight

  EXPECT_EQ(procs[0].name, "python3");
  EXPECT_EQ(procs[0].container, kDocker);
  EXPECT_EQ(procs[0].pod, "");
  EXPECT_EQ(procs[0].ppid, 900u);
  EXPECT_DOUBLE_EQ(procs[0].rss_mib.value_or(0), 25600.0 * page_size() / 1048576.0);
  EXPECT_EQ(procs[0].cmdline, "");  // not asked for
  EXPECT_EQ(procs[1].name, "tricky) (name");
  EXPECT_EQ(procs[1].container, "");
  EXPECT_EQ(procs[2].name, "vllm");
  EXPECT_EQ(procs[2].container, kCrio);
  EXPECT_EQ(procs[2].pod, "8683adea-a445-598d-89db-04bc27c8debe");
  EXPECT_EQ(procs[3].name, "jupyter-lab");
  EXPECT_EQ(procs[3].container, "");

  proc.overlay("t1");
  procs = procs_of({1001, 1002, 1004, 1005});
  host.enrich(procs, 101.0);
  EXPECT_DOUBLE_EQ(procs[0].cpu_pct.value_or(-1), ticks_to_pct(200, 1.0));
  EXPECT_DOUBLE_EQ(procs[1].cpu_pct.value_or(-1), ticks_to_pct(25, 1.0));
  EXPECT_DOUBLE_EQ(procs[2].cpu_pct.value_or(-1), 0.0);
  EXPECT_DOUBLE_EQ(procs[3].cpu_pct.value_or(-1), ticks_to_pct(1, 1.0));
  EXPECT_DOUBLE_EQ(procs[0].rss_mib.value_or(0), 25856.0 * page_size() / 1048576.0);
  EXPECT_EQ(procs[0].container, kDocker);  // from the cache
}

TEST(HostCollector, SamePidTwiceInOneTickKeepsItsFigure) {
  // A process on two GPUs is enriched once per GPU with the same timestamp.
  TempProc proc;
  HostCollector host(proc.options());
  auto procs = procs_of({1001});
  host.enrich(procs, 100.0);
  proc.overlay("t1");
  auto gpu0 = procs_of({1001});
  auto gpu1 = procs_of({1001, 1001});
  host.enrich(gpu0, 101.0);
  host.enrich(gpu1, 101.0);
  EXPECT_DOUBLE_EQ(gpu0[0].cpu_pct.value_or(-1), ticks_to_pct(200, 1.0));
  EXPECT_EQ(gpu1[0].cpu_pct, gpu0[0].cpu_pct);
  EXPECT_EQ(gpu1[1].cpu_pct, gpu0[0].cpu_pct);
}

TEST(HostCollector, ReusedPidStartsAfresh) {
  TempProc proc;
  HostCollector host(proc.options());
  auto procs = procs_of({1003});
  host.enrich(procs, 100.0);
  EXPECT_EQ(procs[0].name, "pt_main_thread");
  EXPECT_EQ(procs[0].container, kContainerd);
  EXPECT_EQ(procs[0].pod, "f4e2b41a-8589-5dac-abeb-5439ed42d10a");

  proc.overlay("t1");  // same PID, new starttime, another pod
  procs = procs_of({1003});
  host.enrich(procs, 101.0);
  EXPECT_EQ(procs[0].name, "torchrun");
  EXPECT_FALSE(procs[0].cpu_pct.has_value());  // not a delta against the old process
  EXPECT_EQ(procs[0].container, kCgroupfs);
  EXPECT_EQ(procs[0].pod, "4aa9792e-831e-5eab-aa1d-72eaff8de30e");
  EXPECT_EQ(procs[0].user, "root");
}

TEST(HostCollector, UnresolvablePidKeepsEmptyName) {
  TempProc proc;
  HostCollector host(proc.options());
  auto procs = procs_of({4242, 1001});
  procs[0].used_mib = 512;
  host.enrich(procs, 100.0);
  EXPECT_EQ(host.unresolved(), (std::vector<std::uint32_t>{4242}));
  EXPECT_EQ(procs[0].name, "");
  EXPECT_EQ(procs[0].user, "");
  EXPECT_FALSE(procs[0].cpu_pct.has_value());
  EXPECT_EQ(procs[0].used_mib, 512);  // what the GPU collector filled stays
  EXPECT_EQ(procs[1].name, "python3");

  // A process that exits between ticks becomes unresolved; the list is per call.
  proc.remove("1001");
  procs = procs_of({1001});
  host.enrich(procs, 101.0);
  EXPECT_EQ(host.unresolved(), (std::vector<std::uint32_t>{1001}));
  // A malformed stat is not taken for a process either.
  proc.write("1001/stat", "1001 (python3) S 1 2\n");
  host.enrich(procs, 102.0);
  EXPECT_EQ(host.unresolved(), (std::vector<std::uint32_t>{1001}));
  EXPECT_EQ(procs[0].name, "");
}

TEST(HostCollector, UserLookupFallsBackToTheNumber) {
  TempProc proc;
  HostCollector host(proc.options());
  auto procs = procs_of({1001, 1002});
  host.enrich(procs, 100.0);
  const passwd* root = getpwuid(0);
  EXPECT_EQ(procs[0].user, root != nullptr ? std::string(root->pw_name) : "0");
  ASSERT_EQ(getpwuid(3999999999u), nullptr) << "this machine has a user 3999999999";
  EXPECT_EQ(procs[1].user, "3999999999");
}

TEST(HostCollector, CmdlineOnlyWhenAskedAndRefreshedOnExec) {
  TempProc proc;
  HostCollector host(proc.options(/*with_cmdline=*/true));
  auto procs = procs_of({1001, 1005});
  host.enrich(procs, 100.0);
  EXPECT_EQ(procs[0].cmdline, "python3 train.py --batch-size 32");
  EXPECT_EQ(procs[1].cmdline, "/opt/conda/bin/python /opt/conda/bin/jupyter-lab");

  // exec() keeps PID and starttime but changes comm and the command line.
  proc.write("1001/stat", stat_line(1001, "nvidia-smi", 6000, 1000, 123456));
  proc.write("1001/cmdline", std::string("nvidia-smi\0-q\0", 14));
  procs = procs_of({1001});
  host.enrich(procs, 101.0);
  EXPECT_EQ(procs[0].name, "nvidia-smi");
  EXPECT_EQ(procs[0].cmdline, "nvidia-smi -q");
}

TEST(HostCollector, SteadyStateReadsOnlyStat) {
  TempProc proc;
  HostCollector host(proc.options());
  auto procs = procs_of({1001});
  host.enrich(procs, 100.0);
  // Identity files are read once per process; changing them later is not seen.
  proc.write("1001/cgroup", "0::/system.slice/other.service\n");
  proc.remove("1001/status");
  procs = procs_of({1001});
  host.enrich(procs, 101.0);
  EXPECT_EQ(procs[0].container, kDocker);
  EXPECT_FALSE(procs[0].user.empty());
}

TEST(HostCollector, ForgetsPidsNotSeenForAWhile) {
  TempProc proc;
  HostCollector host(proc.options());
  auto procs = procs_of({1001});
  host.enrich(procs, 100.0);
  std::vector<ProcessSample> none;
  host.enrich(none, 1000.0);  // long gone from every GPU: dropped from the cache
  proc.overlay("t1");
  procs = procs_of({1001});
  host.enrich(procs, 1001.0);
  EXPECT_FALSE(procs[0].cpu_pct.has_value());  // first sight again, no stale delta
  host.enrich(procs, 1002.0);
  EXPECT_DOUBLE_EQ(procs[0].cpu_pct.value_or(-1), 0.0);
}

TEST(HostCollector, ForeignPidNamespaceResolvesNothing) {
  TempProc proc;
  proc.write("self/status", "Name:\tgpulens\nUid:\t0\t0\t0\t0\nNSpid:\t7\n");
  fs::create_directories(fs::path(proc.root()) / "self/ns");
  fs::create_symlink("pid:[4026532999]", fs::path(proc.root()) / "self/ns/pid");
  HostCollector host(proc.options());
  EXPECT_TRUE(host.foreign_pid_namespace());
  auto procs = procs_of({1001});
  host.enrich(procs, 100.0);
  EXPECT_EQ(procs[0].name, "");  // 1001 here is not the GPU's 1001
  EXPECT_EQ(host.unresolved(), (std::vector<std::uint32_t>{1001}));

  // The host's procfs mounted into the container: this process has two NSpid numbers.
  proc.write("self/status", "Name:\tgpulens\nUid:\t0\t0\t0\t0\nNSpid:\t4707\t7\n");
  EXPECT_FALSE(HostCollector(proc.options()).foreign_pid_namespace());
  fs::remove(fs::path(proc.root()) / "self/ns/pid");
  fs::create_symlink("pid:[4026531836]", fs::path(proc.root()) / "self/ns/pid");
  proc.write("self/status", "Name:\tgpulens\nUid:\t0\t0\t0\t0\nNSpid:\t7\n");
  EXPECT_FALSE(HostCollector(proc.options()).foreign_pid_namespace());
}

TEST(HostCollector, LiveProcfsSmoke) {
  HostCollector host;
  const auto first = host.sample();
  EXPECT_TRUE(first.error.empty()) << first.error;
  EXPECT_GT(first.cpu_count.value_or(0), 0);
  EXPECT_GT(first.mem_total_mib.value_or(0), 0);
  auto procs = procs_of({static_cast<std::uint32_t>(getpid())});
  host.enrich(procs, 1.0);
  if (!host.foreign_pid_namespace()) {
    EXPECT_FALSE(procs[0].name.empty());
    EXPECT_GT(procs[0].rss_mib.value_or(0), 0);
  }
}

}  // namespace
}  // namespace gpulens::sources

// SPDX-License-Identifier: Apache-2.0
// libgpulens_launches.so preloaded into a job linked against the stand-in libcuda.so.1
// (tests/fakes/launch_fake_driver.cpp), which reaches the launch calls each way a real
// job does (tests/fakes/launch_fake_job.cpp): every launch the job made must be in its
// record once, under the driver's name, and reach the driver once. Against a driver
// that hands out its own functions and one that hands out what the process resolves
// their names to (this library's own entry points: taken for the driver's, they
// recursed); from threads; in a fork's child; in a process that skips its exit.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "kernels/record/launch_record_read.hpp"

namespace gpulens::launch_count {
namespace {

namespace fs = std::filesystem;

struct JobRun {
  int exit_code = -1;
  nlohmann::json made;                         // what the job says it made
  std::vector<kernels::LaunchRecord> records;  // what the library wrote
};

// What `command` prints; `exit_code` its exit status (128 + a signal; -1: not run).
std::string output_of(const std::string& command, int& exit_code) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

// The fake job in MODE under the library, its records in a directory of its own.
JobRun run_job(const std::string& mode, const std::string& extra_env = "") {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("launch_count_" + std::to_string(::getpid()) + "_" + mode);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string command = "GPULENS_LAUNCHES_DIR='" + dir.string() + "' LD_PRELOAD='" +
                              GPULENS_LAUNCHES_LIB + "' " + extra_env + " '" +
                              GPULENS_LAUNCH_FAKE_JOB + "' " + mode;
  JobRun run;
  int status = -1;
  const std::string out = output_of(command, status);
  run.exit_code = status;
  run.made = nlohmann::json::parse(out, nullptr, false);
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    auto read = kernels::read_launch_record(nlohmann::json::parse(in, nullptr, false));
    if (auto* r = std::get_if<kernels::LaunchRecord>(&read)) {
      run.records.push_back(std::move(*r));
    } else {
      ADD_FAILURE() << e.path() << ": " << std::get<std::string>(read);
    }
  }
  fs::remove_all(dir);
  return run;
}

std::map<std::string, std::uint64_t> named(const kernels::LaunchRecord& r) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& k : r.kernels) out[k.name] = k.launches;
  return out;
}

std::map<std::string, std::uint64_t> made_of(const nlohmann::json& made) {
  return made["made"].get<std::map<std::string, std::uint64_t>>();
}

// One record holding exactly what the job made, all of which reached the driver.
void expect_counted(const JobRun& run) {
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.records.size(), 1u);
  const auto& r = run.records[0];
  EXPECT_EQ(named(r), made_of(run.made));
  EXPECT_EQ(r.graph_launches, run.made["graphs"].get<std::uint64_t>());
  EXPECT_EQ(r.kernel_launches + r.graph_launches, run.made["received"].get<std::uint64_t>());
  EXPECT_EQ(r.unlisted_launches, 0u);
  EXPECT_TRUE(r.final);
}

TEST(LaunchInterpose, CudartsRoutesAreCountedOnceEach) {
  expect_counted(run_job("cudart 1000"));
}

TEST(LaunchInterpose, ADriverHandingOutOurOwnEntryPointsDoesNotRecurse) {
  expect_counted(run_job("cudart 1000",
                         std::string("LD_LIBRARY_PATH='") + GPULENS_LAUNCH_FAKE_SHIM_DIR + "'"));
}

TEST(LaunchInterpose, CallsThroughThePltAreCounted) {
  expect_counted(run_job("plt 1000"));
}

TEST(LaunchInterpose, EightThreadsLoseNoLaunch) {
  expect_counted(run_job("threads 5000"));
}

TEST(LaunchInterpose, AForksChildWritesItsOwnLaunchesOnly) {
  const JobRun run = run_job("fork 700");
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.records.size(), 2u);
  std::map<std::uint32_t, std::map<std::string, std::uint64_t>> by_pid;
  for (const auto& r : run.records) by_pid[r.pid] = named(r);
  std::vector<std::map<std::string, std::uint64_t>> seen;
  for (const auto& [pid, n] : by_pid) seen.push_back(n);
  const std::map<std::string, std::uint64_t> parent{{"kernel_4", 700}}, child{{"kernel_7", 700}};
  EXPECT_TRUE((seen[0] == parent && seen[1] == child) || (seen[0] == child && seen[1] == parent));
}

TEST(LaunchInterpose, AProcessThatSkipsItsExitLeavesItsLastPeriodicCounts) {
  const JobRun run = run_job("quit 500", "GPULENS_LAUNCHES_EVERY_S=0.05");
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_FALSE(run.records[0].final);
  EXPECT_EQ(named(run.records[0]), made_of(run.made));
}

// The first periodic write comes a second after the first launch, not after the 10 s
// of the steady interval: a short process ended by os._exit keeps its counts. The job
// waits for the record (at most 30 s); 8 s leaves a loaded machine room and the 10 s
// interval none.
TEST(LaunchInterpose, AShortProcessThatSkipsItsExitIsWrittenWithinSeconds) {
  const auto start = std::chrono::steady_clock::now();
  const JobRun run = run_job("quit 300");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(named(run.records[0]), made_of(run.made));
  EXPECT_LT(seconds, 8.0);
}

TEST(LaunchInterpose, RtldNextFromTheJobStillResolvesFromTheJob) {
  const JobRun run = run_job("rtld_next");
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.made["rtld_next_is_global"], true);
  EXPECT_TRUE(run.records.empty()) << "no launch, no record";
}

TEST(LaunchInterpose, WithoutARecordsDirectoryNothingIsCountedOrWritten) {
  const std::string command = std::string("LD_PRELOAD='") + GPULENS_LAUNCHES_LIB + "' '" +
                              GPULENS_LAUNCH_FAKE_JOB + "' plt 100";
  int status = -1;
  const std::string out = output_of(command, status);
  EXPECT_EQ(status, 0);
  const auto made = nlohmann::json::parse(out, nullptr, false);
  EXPECT_EQ(made["received"], 100) << "the launches still reach the driver: " << out;
}

// At exit only: no periodic write, and no thread spinning in place of one.
TEST(LaunchInterpose, AnIntervalOfZeroWritesAtExitOnly) {
  expect_counted(run_job("cudart 1000", "GPULENS_LAUNCHES_EVERY_S=0"));
  // Before the first write at 1 s; a record would come at once if 0 meant "always".
  const JobRun quit = run_job("quit 300", "GPULENS_LAUNCHES_EVERY_S=0 FAKE_JOB_RECORD_WAIT_MS=500");
  EXPECT_EQ(quit.exit_code, 0);
  EXPECT_TRUE(quit.records.empty()) << "os._exit at exit-only leaves nothing";
}

// A job started without `gpulens run`, as a fleet's prolog or pod template starts
// it: no records directory, the node agent's socket only. Each write reaches the
// socket as one datagram, the last of them at exit with every launch.
TEST(LaunchInterpose, WithTheAgentOnlyTheCountsGoToItsSocket) {
  const fs::path socket_path =
      fs::path(::testing::TempDir()) / ("launch_agent_" + std::to_string(::getpid()) + ".sock");
  fs::remove(socket_path);
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << socket_path;
  const std::string command = "env -u GPULENS_LAUNCHES_DIR GPULENS_LAUNCHES_AGENT='" +
                              socket_path.string() + "' LD_PRELOAD='" + GPULENS_LAUNCHES_LIB +
                              "' '" + GPULENS_LAUNCH_FAKE_JOB + "' cudart 1000";
  int status = -1;
  const std::string out = output_of(command, status);
  ASSERT_EQ(status, 0);
  const auto made = nlohmann::json::parse(out, nullptr, false);
  std::vector<kernels::LaunchRecord> got;
  std::string d(kernels::launch_datagram::max_bytes + 1, '\0');
  for (ssize_t len; (len = recv(fd, d.data(), d.size(), MSG_DONTWAIT)) > 0;) {
    EXPECT_LE(static_cast<std::size_t>(len), kernels::launch_datagram::max_bytes);
    auto read = kernels::read_launch_record(
        nlohmann::json::parse(d.substr(0, static_cast<std::size_t>(len)), nullptr, false));
    ASSERT_TRUE(std::holds_alternative<kernels::LaunchRecord>(read)) << std::get<std::string>(read);
    got.push_back(std::get<kernels::LaunchRecord>(std::move(read)));
  }
  close(fd);
  fs::remove(socket_path);
  ASSERT_FALSE(got.empty());
  EXPECT_TRUE(got.back().final);
  EXPECT_EQ(named(got.back()), made_of(made));
  EXPECT_EQ(got.back().kernel_launches + got.back().graph_launches, made["received"]);
}

}  // namespace
}  // namespace gpulens::launch_count

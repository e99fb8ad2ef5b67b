// SPDX-License-Identifier: Apache-2.0
// `gpulens run` reads the job's stderr for an out-of-memory message without the
// job seeing a difference: on a terminal the job's stderr is still one (of the
// same size, following a resize, colours passed through); through a pipe or file
// every byte passes unchanged, binary too; gigabytes cost no memory; a grandchild
// that keeps stderr open does not hold up the verdict; --no-stderr-scan leaves
// stderr alone and the headline says it rests on the counters.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"

namespace gpulens {
namespace {

using testing::read_file;

std::string stderr_temp(const std::string& name) {
  return ::testing::TempDir() + "/run_stderr_" + std::to_string(getpid()) + "_" + name;
}

const std::vector<std::string> kReplayArgs = {"--replay", "examples/calibration-h100.trace.jsonl",
                                              "--speed", "0"};

struct Finished {
  int status = -1;       // as a shell reports it
  long max_rss_kib = 0;  // of gpulens (and the processes it waited for)
};

// gpulens run ARGS -- JOB with stdout and stderr to files, from the source directory.
Finished run_to_files(std::vector<std::string> args, const std::string& job, const std::string& out,
                      const std::string& err) {
  args.insert(args.begin(), "run");
  for (const char* w : {"--", "sh", "-c"}) args.emplace_back(w);
  args.push_back(job);
  const pid_t pid = testing::start_gpulens(args, out, err);
  Finished f;
  int status = 0;
  rusage use{};
  if (wait4(pid, &status, 0, &use) != pid) return f;
  f.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  f.max_rss_kib = use.ru_maxrss;
  return f;
}

nlohmann::json outcome_of(const std::string& report) {
  return nlohmann::json::parse(read_file(report))["job"]["outcome"];
}

TEST(RunStderr, EveryByteOfAPipeOrFilePassesUnchangedBinaryToo) {
  const std::string blob = stderr_temp("blob.bin");
  {
    std::ofstream b(blob, std::ios::binary);
    std::string bytes;
    for (int i = 0; i < 300000; ++i) bytes += static_cast<char>((i * 7919) % 256);
    bytes += std::string("\0\xff\xfe\x1b[2J\r", 7);
    b << bytes;
  }
  const std::string out = stderr_temp("out.txt"), err = stderr_temp("err.bin");
  const auto f =
      run_to_files({"-q", kReplayArgs[0], kReplayArgs[1], kReplayArgs[2], kReplayArgs[3]},
                   "cat '" + blob + "' >&2; exit 4", out, err);
  EXPECT_EQ(f.status, 4);
  EXPECT_TRUE(read_file(err) == read_file(blob)) << read_file(err).size();
  EXPECT_EQ(read_file(out), "");
}

TEST(RunStderr, GigabytesOfStderrCostNoMoreMemoryThanAFewLines) {
  const std::string out = stderr_temp("gb.out"), err = "/dev/null";
  const std::string report = stderr_temp("gb.json");
  const std::vector<std::string> args = {
      "-q", "-o", report, kReplayArgs[0], kReplayArgs[1], kReplayArgs[2], kReplayArgs[3]};
  const auto small = run_to_files(args, "echo 'CUDA error: out of memory' >&2; exit 1", out, err);
  ASSERT_EQ(small.status, 1);
  // Half a gibibyte without a newline, 64 MiB of lines, then the message.
  const auto big =
      run_to_files(args,
                   "head -c 536870912 /dev/zero >&2; yes 'step 1 loss 2.0' | head -c 67108864 >&2; "
                   "printf '\\nCUDA error: out of memory\\n' >&2; exit 1",
                   out, err);
  ASSERT_EQ(big.status, 1);
  EXPECT_EQ(outcome_of(report)["stderr"]["oom_message"], "CUDA error: out of memory");
  // The relay reads 64 KiB at a time and keeps one line of 8 KiB: 576 MiB
  // through it is no more than noise on top of what a few lines cost.
  EXPECT_LT(big.max_rss_kib, small.max_rss_kib + 32 * 1024)
      << small.max_rss_kib << " KiB for a line, " << big.max_rss_kib << " KiB for 576 MiB";
}

TEST(RunStderr, AGrandchildKeepingStderrOpenDoesNotHoldUpTheVerdict) {
  const std::string out = stderr_temp("gc.out"), err = stderr_temp("gc.err");
  const std::string report = stderr_temp("gc.json"), pid_file = stderr_temp("gc.pid");
  const auto start = std::chrono::steady_clock::now();
  const auto f =
      run_to_files({"-o", report, kReplayArgs[0], kReplayArgs[1], kReplayArgs[2], kReplayArgs[3]},
                   "sleep 120 >/dev/null & echo $! > '" + pid_file +
                       "'; echo 'RuntimeError: CUDA error: out of memory' >&2; exit 1",
                   out, err);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int sleeper = std::atoi(read_file(pid_file).c_str());
  if (sleeper > 0) ::kill(sleeper, SIGKILL);
  EXPECT_EQ(f.status, 1);
  EXPECT_LT(took, 60) << "waited for the end of the stream";
  const auto o = outcome_of(report);
  EXPECT_EQ(o["stderr"]["scan"], "read");
  EXPECT_EQ(o["out_of_memory"], true);
  EXPECT_EQ(o["out_of_memory_basis"], "stderr");
  EXPECT_NE(read_file(err).find("it said “RuntimeError: CUDA error: out of memory”"),
            std::string::npos)
      << read_file(err);
}

TEST(RunStderr, NoStderrScanLeavesStderrAsItIsAndTheHeadlineSaysSo) {
  const std::string out = stderr_temp("off.out"), err = stderr_temp("off.err");
  const std::string report = stderr_temp("off.json");
  const std::string job =
      "readlink /proc/$$/fd/2; echo 'torch.OutOfMemoryError: CUDA out of memory.' >&2; exit 1";
  auto f = run_to_files({"--no-stderr-scan", "-o", report, kReplayArgs[0], kReplayArgs[1],
                         kReplayArgs[2], kReplayArgs[3]},
                        job, out, err);
  EXPECT_EQ(f.status, 1);
  // Our own stderr, inherited.
  EXPECT_EQ(read_file(out), std::filesystem::path(err).lexically_normal().string() + "\n");
  auto o = outcome_of(report);
  EXPECT_EQ(o["stderr"]["scan"], "off");
  EXPECT_EQ(o["out_of_memory"], false);
  EXPECT_NE(read_file(err).find("this rests on the counters alone: on its stderr, it was not read "
                                "(--no-stderr-scan)"),
            std::string::npos)
      << read_file(err);
  // Without the flag the same job's stderr is the relay's pipe, and it is heard.
  f = run_to_files({"-o", report, kReplayArgs[0], kReplayArgs[1], kReplayArgs[2], kReplayArgs[3]},
                   job, out, err);
  EXPECT_EQ(f.status, 1);
  EXPECT_TRUE(read_file(out).starts_with("pipe:")) << read_file(out);
  o = outcome_of(report);
  EXPECT_EQ(o["out_of_memory"], true);
  EXPECT_EQ(o["stderr"]["oom_source"], "pytorch");
}

// Reads the terminal's side until `until` is seen (or the deadline passes).
bool read_until(int master, std::string& seen, const std::string& until, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (seen.find(until) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) return false;
    seen.append(buf, static_cast<std::size_t>(n));
  }
  return true;
}

void set_size(int fd, unsigned short rows, unsigned short cols) {
  winsize ws{};
  ws.ws_row = rows;
  ws.ws_col = cols;
  ioctl(fd, TIOCSWINSZ, &ws);
}

TEST(RunStderr, OnATerminalTheJobsStderrIsATerminalOfTheSameSizeThatFollowsAResize) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string slave = ptsname(master);
  set_size(master, 33, 111);
  // The job waits (a bounded while) for its stderr's size to follow the terminal's.
  const std::string job =
      "[ -t 2 ] && echo stderr-is-a-tty; echo \"size $(stty size <&2)\"; echo ready; "
      "i=0; while [ \"$(stty size <&2)\" != '40 132' ] && [ $i -lt 400 ]; do sleep 0.05; "
      "i=$((i+1)); done; echo \"resized $(stty size <&2)\"; "
      "printf '\\033[31mred\\033[0m\\n' >&2; echo 'CUDA error: out of memory' >&2; exit 3";
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    const int fd = open(slave.c_str(), O_RDWR);  // becomes the controlling terminal
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    if (chdir(GPULENS_SOURCE_DIR) != 0) _exit(98);
    execl(GPULENS_BINARY, GPULENS_BINARY, "run", "--replay",
          "examples/calibration-h100.trace.jsonl", "--speed", "0", "--", "sh", "-c", job.c_str(),
          static_cast<char*>(nullptr));
    _exit(99);
  }
  std::string seen;
  EXPECT_TRUE(read_until(master, seen, "ready", 30)) << seen;
  set_size(master, 40, 132);
  EXPECT_TRUE(read_until(master, seen, "died out of memory", 60)) << seen;
  read_until(master, seen, "gpulens report", 10);
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status << seen;
  EXPECT_NE(seen.find("stderr-is-a-tty"), std::string::npos) << seen;
  EXPECT_NE(seen.find("size 33 111"), std::string::npos) << seen;
  EXPECT_NE(seen.find("resized 40 132"), std::string::npos) << seen;
  // Colours pass as written; the terminal turns the newline into "\r\n" itself.
  EXPECT_NE(seen.find("\x1b[31mred\x1b[0m\r\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("it said “CUDA error: out of memory”"), std::string::npos) << seen;
}

}  // namespace
}  // namespace gpulens

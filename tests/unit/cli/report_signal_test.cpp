// SPDX-License-Identifier: Apache-2.0
// `gpulens report` and `gpulens diagnose --replay` end on SIGTERM (143) and
// SIGINT (130) in the middle of their work (issue 31, item 6). Signals are
// blocked in every thread of gpulens and taken by one sigwait thread: without a
// stop action these commands used to ignore Ctrl-C and `timeout` until done.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// A recording that takes gpulens many seconds (tens in a debug build): 100k
// overlapping phases over 100k samples. One file per test process: ctest runs
// each test of this file as its own process, in parallel, and a shared name let
// one process truncate the file while another's gpulens was reading it.
struct RemovedAtExit {
  std::string path;
  ~RemovedAtExit() { std::remove(path.c_str()); }
};

const std::string& big_recording() {
  static const RemovedAtExit file{
      fmt::format("{}/gpulens-signal-big-{}.trace.jsonl", ::testing::TempDir(), getpid())};
  static const std::string path = [] {
    const std::string& p = file.path;
    std::ofstream out(p, std::ios::trunc);
    out << R"({"format": "gpu-trace", "version": 1, "interval_s": 1.0, "devices": [{"index": 0}]})"
        << "\n";
    constexpr int kN = 100000;
    for (int i = 0; i < kN; ++i) {
      const double t = 1795000000.0 + i;
      out << fmt::format(R"({{"t":{:.1f},"mark":"p{}:start"}})", t - 0.5, i % 50) << "\n";
      out << fmt::format(R"({{"t":{:.1f},"gpu":0,"gpu_util":{},"sm_active":{},"power_w":300}})", t,
                         40 + i % 60, 30 + i % 50)
          << "\n";
      if (i >= 500) {
        out << fmt::format(R"({{"t":{:.1f},"mark":"p{}:end"}})", t + 0.25, (i - 500) % 50) << "\n";
      }
    }
    return p;
  }();
  return path;
}

pid_t start(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> argv;
    std::vector<std::string> all = {GPULENS_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(GPULENS_BINARY, argv.data());
    _exit(99);
  }
  return pid;
}

// The exit code (128 + signal when killed), or -1 when still running after `seconds`.
int wait_for_exit(pid_t pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() >= until) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Starts the command, lets it work 0.3 s, sends `sig` and expects the exit code.
// Generous limits: a loaded machine may be slow to start it and to schedule it.
void expect_ends_on(const std::vector<std::string>& args, int sig, int code) {
  const pid_t pid = start(args);
  ASSERT_GT(pid, 0);
  const int early = wait_for_exit(pid, 0.3);
  ASSERT_EQ(early, -1) << "gpulens finished before the signal (code " << early
                       << "): the recording is too small to test this";
  ASSERT_EQ(kill(pid, sig), 0);
  const int exit_code = wait_for_exit(pid, 20.0);
  if (exit_code == -1) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  EXPECT_EQ(exit_code, code) << "-1: still running 20 s after signal " << sig;
}

TEST(ReportSignals, SigtermEndsAReportMidWay) {
  expect_ends_on({"report", big_recording()}, SIGTERM, 143);
}

TEST(ReportSignals, CtrlCEndsAReportMidWay) {
  expect_ends_on({"report", "--format", "json", big_recording()}, SIGINT, 130);
}

TEST(ReportSignals, SigtermEndsADiagnosisOfARecordingMidWay) {
  expect_ends_on({"diagnose", "--replay", big_recording()}, SIGTERM, 143);
}

}  // namespace

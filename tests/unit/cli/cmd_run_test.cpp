// SPDX-License-Identifier: Apache-2.0
// `gpulens run` end to end, with the real binary and no GPU (samples come from
// --replay): the job's exit status, signals, stdin and big outputs pass through
// untouched, Ctrl-C reaches the job while gpulens waits to give the verdict, and
// the report is written.
#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_support.hpp"
#include "core/trace_reader.hpp"

namespace gpulens {
namespace {

using testing::read_file;
using testing::start_gpulens;
using testing::wait_for_file_text;

const std::string kReplay = "--replay examples/calibration-h100.trace.jsonl --speed 0";

std::string run_temp_path(const std::string& name) {
  // ctest runs test processes in parallel: keep each process's files apart.
  return ::testing::TempDir() + "/run_cli_" + std::to_string(getpid()) + "_" + name;
}

// A shell command line from the source directory; stderr is kept apart.
testing::CommandResult shell(const std::string& command) {
  const std::string err = run_temp_path("stderr.txt");
  const std::string line =
      "cd '" + std::string(GPULENS_SOURCE_DIR) + "' && (" + command + ") 2>'" + err + "'";
  testing::CommandResult r;
  FILE* pipe = popen(line.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[65536];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = read_file(err);
  return r;
}

const std::string kBin = std::string("'") + GPULENS_BINARY + "'";

TEST(RunCli, ExitCodeOfTheJobBecomesOurs) {
  auto r = shell(kBin + " run -q " + kReplay + " -- sh -c 'echo out; echo err >&2; exit 3'");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");  // -q: the job's own output only
  r = shell(kBin + " run " + kReplay + " -- sh -c 'exit 0'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("exited with code 0"), std::string::npos) << r.err;
}

TEST(RunCli, AJobKilledByASignalGivesOneHundredTwentyEightPlusIt) {
  const auto r = shell(kBin + " run " + kReplay + " -- sh -c 'kill -KILL $$'");
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_NE(r.err.find("was killed by signal 9"), std::string::npos) << r.err;
}

TEST(RunCli, TheJobReadsOurStdin) {
  const auto r = shell("printf 'hello\\nworld\\n' | " + kBin + " run -q " + kReplay + " -- cat");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "hello\nworld\n");
}

TEST(RunCli, AMissingCommandExitsLikeAShell) {
  const auto r = shell(kBin + " run -q -- gpulens-no-such-command");
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("cannot run 'gpulens-no-such-command'"), std::string::npos) << r.err;
  EXPECT_EQ(shell(kBin + " run").exit_code, 2);  // no job given
}

// Megabytes on both streams at once: no deadlock, not a byte lost, both when
// stdout is inherited and when it goes through the step-matching pipe.
TEST(RunCli, MegabytesOnStdoutAndStderrPassThroughWhole) {
  const std::string job =
      "sh -c 'seq 1 400000 | sed \"s/^/step /\"; seq 1 400000 >&2; seq 400001 500000'";
  const auto expected = shell(job);
  ASSERT_EQ(expected.exit_code, 0);
  ASSERT_GT(expected.out.size(), 4'000'000u);
  for (const std::string opts : {"", "--flops-per-step 1e12 --step-regex '^step [0-9]*0000$' "}) {
    const std::string trace = run_temp_path("big.trace.jsonl");
    const auto r =
        shell(kBin + " run -q " + kReplay + " --trace " + trace + " " + opts + "-- " + job);
    EXPECT_EQ(r.exit_code, 0) << opts;
    EXPECT_EQ(r.out.size(), expected.out.size()) << opts;
    EXPECT_TRUE(r.out == expected.out) << opts;
    EXPECT_TRUE(r.err == expected.err) << opts;
    if (!opts.empty()) {
      auto t = read_trace(trace);
      ASSERT_TRUE(t) << t.error().message;
      int steps = 0;
      for (const auto& m : t->marks) {
        if (m.name != "step") continue;
        ++steps;
        EXPECT_DOUBLE_EQ(m.fields["flops"].get<double>(), 1e12);
      }
      EXPECT_EQ(steps, 40);  // step 10000, 20000, ... 400000
    }
  }
}

TEST(RunCli, ReplayGivesTheVerdictAndTheReports) {
  const std::string json = run_temp_path("report.json");
  const std::string html = run_temp_path("report.html");
  const std::string trace = run_temp_path("replay.trace.jsonl");
  auto r = shell(kBin + " run " + kReplay + " --trace " + trace + " -o " + json + " -- true");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"Utilization funnel", "kernel-active", "What the GPUs were doing",
                           "Fixes that matter most", "Cost at $2.99 per GPU-hour", "MFU"}) {
    EXPECT_NE(r.err.find(part), std::string::npos) << part << "\n" << r.err;
  }
  const auto j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j["job"]["command"], "true");
  EXPECT_EQ(j["job"]["exit_code"], 0);
  // The whole replay was recorded: the same funnel as a report on the original.
  const auto offline = shell(kBin + " report --format json examples/calibration-h100.trace.jsonl");
  const auto o = nlohmann::json::parse(offline.out);
  EXPECT_EQ(j["funnel"]["kernel_active"], o["funnel"]["kernel_active"]);
  EXPECT_EQ(j["funnel"]["sm_active"], o["funnel"]["sm_active"]);
  // ... and `gpulens report` on the run's trace says the same as the run did.
  r = shell(kBin + " report " + trace + " -o " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(html).find("<code>true</code>"), std::string::npos);
}

// Each process of the job loads the launch counter unless --no-launches; its counts
// reach the report, the recording, and `gpulens report` on it.
TEST(RunCli, TheJobsKernelLaunchesAreCountedIntoTheReport) {
  const std::string json = run_temp_path("launches.json");
  const std::string html = run_temp_path("launches.html");
  const std::string trace = run_temp_path("launches.trace.jsonl");
  const std::string job = std::string("'") + GPULENS_LAUNCH_FAKE_JOB + "' cudart 500";
  auto r = shell("GPULENS_LAUNCHES_LIB='" + std::string(GPULENS_LAUNCHES_LIB) + "' " + kBin +
                 " run " + kReplay + " --trace " + trace + " -o " + json + " -- " + job);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Kernel launches"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4,000 kernel launches and 1,000 CUDA-graph launches (1 graph"),
            std::string::npos)
      << r.err;
  const auto j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j["launches"]["kernel_launches"], 4000);
  EXPECT_EQ(j["launches"]["graph_launches"], 1000);
  EXPECT_EQ(j["launches"]["top"].size(), 8u);
  EXPECT_EQ(j["launches"]["processes"][0]["final"], true);
  r = shell(kBin + " report " + trace + " -o " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(html).find("id=\"launches\""), std::string::npos);

  r = shell(kBin + " run --no-launches " + kReplay + " -o " + json + " -- " + job);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(json)).count("launches"), 0u);
}

TEST(RunCli, WithoutTheLaunchCounterTheJobRunsAndTheRunSaysWhy) {
  const auto r = shell("GPULENS_LAUNCHES_LIB=/nonexistent/lib.so " + kBin + " run " + kReplay +
                       " -- sh -c 'echo ran'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_NE(r.err.find("no launch counts: $GPULENS_LAUNCHES_LIB names no file"), std::string::npos)
      << r.err;
}

// A recording of a job whose memory grows to the card's ceiling: replayed under
// a job that then fails, gpulens must say it died out of memory, first.
std::string leaking_trace() {
  const std::string path = run_temp_path("leak.trace.jsonl");
  std::ofstream out(path);
  out << R"({"format":"gpu-trace","version":1,"interval_s":1.0,"host":"test","devices":)"
      << R"([{"index":0,"name":"NVIDIA H100 80GB HBM3","mem_total_mib":81559,"sm_count":132,)"
      << R"("power_limit_w":700}]})"
      << "\n";
  for (int i = 1; i <= 60; ++i) {
    out << fmt::format(
               R"({{"t":{},"gpu":0,"gpu_util":40,"sm_active":35,"tensor_active":30,"dram_active":5,)"
               R"("power_w":300,"mem_used_mib":{:.0f}}})",
               1000 + i, 2000 + (81300.0 - 2000) * i / 60)
        << "\n";
  }
  return path;
}

TEST(RunCli, AJobThatFailsWithMemoryAtTheCeilingDiedOutOfMemory) {
  const std::string json = run_temp_path("oom.json");
  const auto r = shell(kBin + " run --replay " + leaking_trace() + " --speed 0 -o " + json +
                       " -- sh -c 'echo CUDA out of memory >&2; exit 1'");
  EXPECT_EQ(r.exit_code, 1);  // the job's, passed through
  // The verdict leads with the death, before the funnel and the states.
  const auto verdict = r.err.find("verdict  The job died out of memory");
  ASSERT_NE(verdict, std::string::npos) << r.err;
  EXPECT_LT(verdict, r.err.find("Utilization funnel"));
  EXPECT_NE(r.err.find("79.4 of 79.6 GiB"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j["job"]["exit_code"], 1);
  EXPECT_EQ(j["job"]["outcome"]["end"], "failed");
  EXPECT_EQ(j["job"]["outcome"]["out_of_memory"], true);
  EXPECT_EQ(j["headline_items"][0]["kind"], "out_of_memory");
  EXPECT_EQ(j["fix_details"][0]["tier"], "out_of_memory");
  // The same recording under a job that succeeds is no death.
  const auto ok =
      shell(kBin + " run -q --replay " + leaking_trace() + " --speed 0 -o " + json + " -- true");
  EXPECT_EQ(ok.exit_code, 0);
  const auto k = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(k["job"]["outcome"]["end"], "exited");
  EXPECT_EQ(k["job"]["outcome"]["out_of_memory"], false);
  EXPECT_NE(k["headline_items"][0]["kind"], "out_of_memory");
}

TEST(RunCli, StepMarksFromTheJobGiveModelFlopsMfu) {
  // Three steps one second apart inside the recording, 2e14 FLOPs each:
  // 2e14 FLOP/s over the H100's 989.4 TFLOP/s.
  const std::string json = run_temp_path("mfu.json");
  const std::string job =
      "sh -c 'for t in 1795289340 1795289341 1795289342; do "
      "echo \"{\\\"t\\\": $t, \\\"mark\\\": \\\"step\\\", \\\"flops\\\": 2e14}\" >> "
      "\"$GPULENS_MARKS\"; done'";
  const auto r = shell(kBin + " run -q " + kReplay + " -o " + json + " -- " + job);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(json));
  ASSERT_TRUE(j["mfu"]["model"].is_object()) << j["mfu"].dump();
  EXPECT_NEAR(j["mfu"]["model"]["mfu"].get<double>(), 2e14 / 989.4e12, 1e-4);
  EXPECT_EQ(j["mfu"]["model"]["steps"], 2);
  EXPECT_EQ(j["mfu"]["model"]["source"], "step marks");
}

TEST(RunCli, WithoutGpusTheJobStillRunsAndNothingIsMeasured) {
  if (void* h = dlopen("libnvidia-ml.so.1", RTLD_LAZY); h != nullptr) {
    dlclose(h);
    GTEST_SKIP() << "an NVIDIA driver is present: this test is for machines without one";
  }
  const auto r = shell(kBin + " run -- sh -c 'echo ran; exit 4'");
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_NE(r.err.find("Nothing was measured"), std::string::npos) << r.err;
}

int wait_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

const std::string kTrapJob =
    "trap 'echo got-int; exit 5' INT; trap 'echo got-term; exit 7' TERM; echo ready; "
    "while :; do sleep 0.05; done";

TEST(RunCli, ASignalSentToGpulensAloneIsPassedToTheJob) {
  for (int sig : {SIGINT, SIGTERM}) {
    // Files of their own: a "ready" left from the last round must not count.
    const std::string out = run_temp_path(fmt::format("sig{}.out", sig));
    const std::string err = run_temp_path(fmt::format("sig{}.err", sig));
    std::ofstream(out).close();
    const pid_t pid = start_gpulens({"run", "--replay", "examples/calibration-h100.trace.jsonl",
                                     "--speed", "0", "--", "sh", "-c", kTrapJob},
                                    out, err);
    ASSERT_TRUE(wait_for_file_text(out, "ready", 10)) << read_file(err);
    kill(pid, sig);
    const int code = wait_status(pid);
    EXPECT_EQ(code, sig == SIGINT ? 5 : 7) << read_file(err);
    EXPECT_NE(read_file(out).find(sig == SIGINT ? "got-int" : "got-term"), std::string::npos);
    // gpulens outlived its job and gave the verdict.
    EXPECT_NE(read_file(err).find(sig == SIGINT ? "exited with code 5" : "exited with code 7"),
              std::string::npos)
        << read_file(err);
  }
}

// Ctrl-C on a real terminal: the kernel sends SIGINT to the whole foreground
// process group; gpulens must not die first, and must not send a second one.
TEST(RunCli, CtrlCOnATerminalReachesTheJobAndGpulensWaits) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string slave = ptsname(master);
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    const int fd = open(slave.c_str(), O_RDWR);  // becomes the controlling terminal
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    signal(SIGINT, SIG_DFL);
    if (chdir(GPULENS_SOURCE_DIR) != 0) _exit(98);
    const std::string job =
        "trap 'echo got-int; sleep 0.3; echo job-done; exit 5' INT; "
        "echo ready; while :; do sleep 0.05; done";
    execl(GPULENS_BINARY, GPULENS_BINARY, "run", "--replay",
          "examples/calibration-h100.trace.jsonl", "--speed", "0", "--", "sh", "-c", job.c_str(),
          static_cast<char*>(nullptr));
    _exit(99);
  }
  std::string seen;
  bool sent = false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      char buf[4096];
      const ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) break;  // the terminal closed: everything on it exited
      seen.append(buf, static_cast<std::size_t>(n));
    }
    if (!sent && seen.find("ready") != std::string::npos) {
      // A user presses Ctrl-C while the job runs, not in its first microseconds.
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      const char ctrl_c = 3;
      ASSERT_EQ(write(master, &ctrl_c, 1), 1);
      sent = true;
    }
  }
  close(master);
  EXPECT_EQ(wait_status(pid), 5) << seen;
  EXPECT_NE(seen.find("job-done"), std::string::npos) << seen;
  // One SIGINT, from the terminal: gpulens did not send the job a second one.
  EXPECT_EQ(seen.find("got-int\r\n"), seen.rfind("got-int\r\n")) << seen;
  EXPECT_NE(seen.find("exited with code 5"), std::string::npos) << seen;
}

}  // namespace
}  // namespace gpulens

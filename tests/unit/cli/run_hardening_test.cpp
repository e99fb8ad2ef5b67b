// SPDX-License-Identifier: Apache-2.0
// `gpulens run` against jobs that fight it (issue 31): a job that ignores the stop
// signal passed on, a job that swaps its marks file for a FIFO or a link to
// /dev/zero, one that floods it with garbage, one that leaves garbage or a FIFO
// among its kernel records. gpulens must always end, with the job's exit status
// and a verdict that says what it could not read. Real child processes; every
// wait is on a condition with a generous deadline, so a loaded machine is slower,
// never flaky, and a regression fails instead of hanging the suite.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "core/input_limits.hpp"

namespace gpulens {
namespace {

using testing::read_file;
using testing::start_gpulens;
using testing::wait_for_file_text;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/run_hard_" + std::to_string(getpid()) + "_" + name;
}

// The exit status as a shell gives it, or -1 when gpulens had not ended within
// `seconds` (it is then killed, with the job's group when `job_pid_file` names it).
int wait_status_within(pid_t pid, double seconds, const std::string& job_pid_file = "") {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < until) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!job_pid_file.empty()) {
    const std::string job = read_file(job_pid_file);
    if (const int jp = std::atoi(job.c_str()); jp > 0) kill(-jp, SIGKILL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

struct Ran {
  int status = -1;
  std::string out, err;
};

// `gpulens run -o REPORT ... -- sh -c JOB` on the replay, to its end (or the deadline).
Ran run_job(const std::string& name, const std::vector<std::string>& options,
            const std::string& job, const std::string& report, double seconds = 120) {
  const std::string out = temp_path(name + ".out"), err = temp_path(name + ".err");
  std::vector<std::string> args = {
      "run", "--replay", "examples/calibration-h100.trace.jsonl", "--speed", "0", "-o", report};
  args.insert(args.end(), options.begin(), options.end());
  for (const char* a : {"--", "sh", "-c"}) args.emplace_back(a);
  args.push_back(job);
  Ran r;
  r.status = wait_status_within(start_gpulens(args, out, err), seconds);
  r.out = read_file(out);
  r.err = read_file(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

nlohmann::json report_json(const std::string& path) {
  return nlohmann::json::parse(read_file(path), nullptr, false);
}

bool any_note(const nlohmann::json& notes, const std::string& text) {
  if (!notes.is_array()) return false;
  for (const auto& n : notes) {
    if (n.is_string() && n.get<std::string>().find(text) != std::string::npos) return true;
  }
  return false;
}

// Before: gpulens passed SIGTERM on and waited for the job for ever (the job's
// `sleep` ran its 100 s, then gpulens exited 0). Now the group gets SIGKILL
// after --kill-after, gpulens exits 137 and gives the verdict.
TEST(HardenedRun, AJobIgnoringTheStopSignalIsKilledAfterTheGrace) {
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig);
    const std::string out = temp_path(fmt::format("trap{}.out", sig));
    const std::string err = temp_path(fmt::format("trap{}.err", sig));
    const std::string job_pid = temp_path(fmt::format("trap{}.pid", sig));
    const pid_t pid = start_gpulens(
        {"run", "--kill-after", "1", "--replay", "examples/calibration-h100.trace.jsonl", "--speed",
         "0", "--", "bash", "-c",
         "trap '' TERM INT; echo $$ > '" + job_pid + "'; echo ready; sleep 100; echo survived"},
        out, err);
    ASSERT_TRUE(wait_for_file_text(out, "ready", 60)) << read_file(err);
    const auto sent = std::chrono::steady_clock::now();
    kill(pid, sig);
    const int code = wait_status_within(pid, 60, job_pid);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
    EXPECT_EQ(code, 128 + SIGKILL) << read_file(err);
    EXPECT_GE(took, 0.9);  // the grace was given
    const std::string said = read_file(err);
    EXPECT_NE(said.find("did not end within 1 s of"), std::string::npos) << said;
    EXPECT_NE(said.find("was killed by signal 9"), std::string::npos) << said;  // the verdict
    EXPECT_EQ(read_file(out).find("survived"), std::string::npos);
    for (const auto& f : {out, err, job_pid}) std::remove(f.c_str());
  }
}

TEST(HardenedRun, KillAfterIsInTheHelp) {
  const auto r = testing::run_gpulens("run --help");
  EXPECT_NE(r.out.find("--kill-after"), std::string::npos) << r.out;
}

// Before: open(2) of the FIFO blocked gpulens for ever after the job ended.
TEST(HardenedRun, AMarksFileSwappedForAFifoIsRefusedAndTheRunEnds) {
  const std::string report = temp_path("fifo.json");
  const auto r =
      run_job("fifo", {}, "rm -f \"$GPULENS_MARKS\"; mkfifo \"$GPULENS_MARKS\"; exit 3", report);
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("the job's marks file: no longer read once the job replaced it: not a "
                       "regular file (a FIFO)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(any_note(report_json(report)["notes"], "not a regular file (a FIFO)"));
  std::remove(report.c_str());
}

// Before: gpulens read /dev/zero at 100 % CPU for ever after the job ended.
TEST(HardenedRun, AMarksFileLinkedToDevZeroIsRefusedAndTheRunEnds) {
  const std::string report = temp_path("zero.json");
  const auto r = run_job("zero", {}, "ln -sf /dev/zero \"$GPULENS_MARKS\"; exit 4", report);
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_NE(r.err.find("not a regular file (a character device)"), std::string::npos) << r.err;
  std::remove(report.c_str());
}

// Before: every byte was read (1 GiB took over a minute) and the skipped lines
// were never said. Now reading stops at kMaxMarksFileBytes, and the verdict says
// how many lines were skipped and that the rest was not read.
TEST(HardenedRun, AFloodOfGarbageInTheMarksFileIsBoundedAndSaid) {
  const std::string report = temp_path("flood.json");
  const auto r =
      run_job("flood", {}, "yes x | head -c 100000000 >> \"$GPULENS_MARKS\"; exit 5", report);
  EXPECT_EQ(r.status, 5) << r.err;
  const std::size_t garbage_lines = kMaxMarksFileBytes / 2;  // "x\n" each
  const std::string skipped =
      fmt::format("{} lines of the job's marks file skipped", garbage_lines);
  EXPECT_NE(r.err.find(skipped), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not read past 64 MiB"), std::string::npos) << r.err;
  const auto j = report_json(report);
  EXPECT_TRUE(any_note(j["notes"], skipped)) << j["notes"].dump();
  std::remove(report.c_str());
}

#ifdef GPULENS_KERNELS_FAKE_JOB
// KernelsRun*, like the other --kernels tests, so that the ASan subset of CI
// (Hardened*) leaves them out: there the injection library is built with ASan,
// and a job that is not (sh) cannot load it ("ASan runtime does not come first").
// Before: the garbled record threw out of the analysis: SIGABRT (134), the job's
// status and the report lost.
TEST(KernelsRunHardened, AGarbledKernelRecordCostsNeitherTheStatusNorTheReport) {
  const std::string report = temp_path("kbad.json");
  const auto r = run_job("kbad", {"--kernels"},
                         "printf '{\"x_kernels\":3,\"pid\":77,\"status\":5}' > "
                         "\"$GPULENS_KERNELS_DIR/kernels-77.json\";"
                         " exit 6",
                         report);
  EXPECT_EQ(r.status, 6) << r.err;
  const auto k = report_json(report)["kernels"];
  EXPECT_TRUE(any_note(k["notes"],
                       "kernel record of process 77 skipped: field `status` is not a "
                       "string"))
      << k.dump();
  std::remove(report.c_str());
}

// Before: a FIFO among the records blocked gpulens in open(2) for ever.
TEST(KernelsRunHardened, AFifoOrDeviceAmongTheKernelRecordsIsSaidAndTheRunEnds) {
  const std::string report = temp_path("kfifo.json");
  const auto r = run_job("kfifo", {"--kernels"},
                         "mkfifo \"$GPULENS_KERNELS_DIR/kernels-1.json\"; "
                         "ln -s /dev/zero \"$GPULENS_KERNELS_DIR/kernels-2.json\"; "
                         "printf '[[[[' > \"$GPULENS_KERNELS_DIR/kernels-3.json\"; exit 2",
                         report);
  EXPECT_EQ(r.status, 2) << r.err;
  const auto k = report_json(report)["kernels"];
  EXPECT_TRUE(any_note(k["notes"], "kernels-1.json: not a regular file (a FIFO)")) << k.dump();
  EXPECT_TRUE(any_note(k["notes"], "kernels-2.json: not a regular file (a symbolic link)"))
      << k.dump();
  EXPECT_TRUE(any_note(k["notes"], "kernels-3.json: not valid JSON")) << k.dump();
  std::remove(report.c_str());
}

// A job that swaps its records directory for a link to another directory, or a
// record for a link to another file: gpulens neither reads nor deletes what the
// links point at (it may run with more rights than the job's code deserves).
// Before: the other directory's records were read into the report and deleted,
// and a linked record was read.
TEST(KernelsRunHardened, LinksPlantedForTheRecordsLeadNowhere) {
  namespace fs = std::filesystem;
  const fs::path elsewhere = temp_path("klink-elsewhere");
  fs::remove_all(elsewhere);
  fs::create_directories(elsewhere);
  const std::string record = R"({"x_kernels":3,"pid":424242,"status":"ok","kernels":[]})";
  std::ofstream(elsewhere / "kernels-424242.json") << record << "\n";
  std::ofstream(elsewhere / "single.json") << record << "\n";
  const std::string report = temp_path("klink.json");
  const auto r =
      run_job("klink", {"--kernels"},
              "ln -s '" + (elsewhere / "single.json").string() +
                  "' \"$GPULENS_KERNELS_DIR/kernels-5.json\"; mv \"$GPULENS_KERNELS_DIR\" "
                  "\"$GPULENS_KERNELS_DIR.job\"; ln -s '" +
                  elsewhere.string() + "' \"$GPULENS_KERNELS_DIR\"; exit 3",
              report);
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(fs::exists(elsewhere / "kernels-424242.json"))
      << "deleted through the linked directory";
  EXPECT_TRUE(fs::exists(elsewhere / "single.json"));
  const auto k = report_json(report)["kernels"];
  EXPECT_TRUE(any_note(k["notes"], "kernels-5.json: not a regular file (a symbolic link)"))
      << k.dump();
  EXPECT_EQ(k.dump().find("424242"), std::string::npos)
      << "a record read through the link: " << k.dump();
  fs::remove_all(elsewhere);
  std::remove(report.c_str());
}
#endif

}  // namespace
}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
// `gpulens run --kernels` with no GPU: a job that never starts CUDA, and a job
// whose CUPTI cannot be loaded, run exactly as without --kernels (same output,
// same exit status), and the report says why there is no kernel view.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "cli_support.hpp"

namespace gpulens {
namespace {

using testing::read_file;
using testing::run_gpulens;

const std::string kReplay = "--replay examples/calibration-h100.trace.jsonl --speed 0";

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/kernels_run_" + std::to_string(getpid()) + "_" + name;
}

nlohmann::json kernels_section(const std::string& report_path) {
  const auto j = nlohmann::json::parse(read_file(report_path), nullptr, false);
  if (j.is_discarded() || !j.contains("kernels")) return {};
  return j["kernels"];
}

TEST(KernelsRun, AJobWithoutCudaRunsUnchanged) {
  const std::string report = temp_path("nocuda.json");
  const auto r = run_gpulens("run --kernels -q " + kReplay + " -o '" + report +
                             "' -- sh -c 'echo plain output; exit 3'");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "plain output\n");
  const auto k = kernels_section(report);
  ASSERT_FALSE(k.is_null()) << read_file(report);
  EXPECT_FALSE(k["available"].get<bool>());
  // Where the library was built the job simply never started CUDA; elsewhere
  // --kernels says it was not built. Either way the report says which.
  const std::string status = k["status"];
  EXPECT_TRUE(status == "no_cuda" || status == "not_built") << status;
  ASSERT_FALSE(k["notes"].empty());
  std::remove(report.c_str());
}

#ifdef GPULENS_KERNELS_FAKE_JOB
TEST(KernelsRun, AJobWhoseCuptiCannotBeLoadedRunsUnchanged) {
  const std::string report = temp_path("nocupti.json");
  const auto r = run_gpulens("run --kernels -q " + kReplay + " -o '" + report +
                             "' -- env GPULENS_CUPTI=/nonexistent/libcupti.so.13 '" +
                             GPULENS_KERNELS_FAKE_JOB + "' 7");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "fake cuda job output\n");
  const auto k = kernels_section(report);
  ASSERT_FALSE(k.is_null()) << read_file(report);
  EXPECT_FALSE(k["available"].get<bool>());
  EXPECT_EQ(k["status"], "no_cupti");
  ASSERT_FALSE(k["notes"].empty());
  EXPECT_NE(k["notes"][0].get<std::string>().find("libcupti was not found"), std::string::npos)
      << k["notes"];
  std::remove(report.c_str());
}

// `gpulens run --kernels` started with `env` before it (VAR=value ...), its job
// printing the CUDA_INJECTION64_PATH it was given between brackets: the job's output.
std::string injection_seen_by_job(const std::string& env, const std::string& report) {
  const std::string cmd = "cd '" + std::string(GPULENS_SOURCE_DIR) + "' && " + env + " '" +
                          GPULENS_BINARY + "' run --kernels -q " + kReplay + " -o '" + report +
                          "' -- sh -c 'echo \"[$CUDA_INJECTION64_PATH]\"' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "(popen failed)";
  char buf[256] = {};
  const size_t n = fread(buf, 1, sizeof buf - 1, p);
  EXPECT_EQ(pclose(p), 0);
  return std::string(buf, n);
}

TEST(KernelsRun, ALibraryThisSystemCannotLoadNeverReachesTheJob) {
  // A library that does not load here (a glibc older than it needs, a damaged
  // file) is refused by gpulens itself: the job gets no injection variables.
  const std::string report = temp_path("unloadable.json");
  const std::string lib = temp_path("libgpulens_kernels.so");
  { std::ofstream(lib) << "not a shared library\n"; }
  EXPECT_EQ(injection_seen_by_job("GPULENS_KERNELS_LIB='" + lib + "'", report), "[]\n");
  const auto k = kernels_section(report);
  EXPECT_EQ(k["status"], "not_loadable") << k.dump();
  ASSERT_FALSE(k["notes"].empty());
  EXPECT_NE(k["notes"][0].get<std::string>().find("cannot be loaded on this system"),
            std::string::npos)
      << k["notes"];
  std::remove(report.c_str());
  std::remove(lib.c_str());
}

TEST(KernelsRun, AnotherToolHoldingTheInjectionPointIsSaid) {
  const std::string report = temp_path("taken.json");
  // With CUDA_INJECTION64_PATH already set (Nsight Systems), gpulens leaves it.
  EXPECT_EQ(injection_seen_by_job("CUDA_INJECTION64_PATH=/opt/other/libinject.so", report),
            "[/opt/other/libinject.so]\n");
  const auto k = kernels_section(report);
  EXPECT_EQ(k["status"], "injection_taken");
  std::remove(report.c_str());
}

// The kernel records of a recording (the x_kernels lines).
std::vector<nlohmann::json> kernel_records(const std::string& trace_path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_file(trace_path));
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("x_kernels")) out.push_back(std::move(j));
  }
  return out;
}

// One process's version-4 lines by kind (kernels/record/chunk_record.hpp).
struct ProcessLines {
  nlohmann::json process, end;
  std::vector<nlohmann::json> chunks;
  std::size_t processes = 0;  // distinct pids
};
ProcessLines by_kind(const std::vector<nlohmann::json>& lines) {
  ProcessLines p;
  std::set<std::int64_t> pids;
  for (const auto& l : lines) {
    EXPECT_EQ(l["x_kernels"], 4) << l.dump();
    pids.insert(l.value("pid", std::int64_t{0}));
    const std::string kind = l.value("record", "");
    if (kind == "process") p.process = l;
    if (kind == "end") p.end = l;
    if (kind == "chunk") p.chunks.push_back(l);
  }
  p.processes = pids.size();
  return p;
}

TEST(KernelsRun, TheJobsFirstNvtxCallIsPassedOnToItsCupti) {
  // gpulens names its library in NVTX_INJECTION64_PATH; the library hands NVTX's
  // call to the libcupti it found (here one with only NVTX's entry point).
  const std::string report = temp_path("nvtx.json");
  const std::string trace = temp_path("nvtx.jsonl");
  const auto r = run_gpulens("run --kernels -q " + kReplay + " -o '" + report + "' --trace '" +
                             trace + "' -- env GPULENS_CUPTI='" + GPULENS_KERNELS_FAKE_CUPTI +
                             "' FAKE_JOB_SAY_NVTX=1 '" + GPULENS_KERNELS_FAKE_JOB + "' 0");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "nvtx init 1 table 1\nfake cuda job output\n");
  const ProcessLines p = by_kind(kernel_records(trace));
  ASSERT_EQ(p.processes, 1u) << read_file(trace);
  EXPECT_EQ(p.end["status"], "no_cupti");  // no Activity API in the stand-in
  EXPECT_EQ(p.end["nvtx"]["status"], "ok");
  EXPECT_TRUE(p.chunks.empty());
  std::remove(report.c_str());
  std::remove(trace.c_str());
}

TEST(KernelsRun, AJobWithItsOwnNvtxToolKeepsItAndTheReportSaysSo) {
  const std::string report = temp_path("nvtx_taken.json");
  const std::string trace = temp_path("nvtx_taken.jsonl");
  const auto r =
      run_gpulens("run --kernels -q " + kReplay + " -o '" + report + "' --trace '" + trace +
                  "' -- env NVTX_INJECTION64_PATH=/opt/other/libnvtx_tool.so "
                  "GPULENS_CUPTI=/nonexistent/libcupti.so.13 FAKE_JOB_SAY_NVTX=1 '" +
                  GPULENS_KERNELS_FAKE_JOB + "' 0");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "nvtx init -1 table 0\nfake cuda job output\n");  // its tool, not ours
  const ProcessLines p = by_kind(kernel_records(trace));
  ASSERT_EQ(p.processes, 1u) << read_file(trace);
  EXPECT_EQ(p.end["nvtx"]["status"], "injection_taken");
  const auto k = kernels_section(report);
  bool said = false;
  for (const auto& n : k["notes"]) {
    said = said || n.get<std::string>().find(
                       "NVTX ranges not recorded: NVTX_INJECTION64_PATH "
                       "names another tool (/opt/other/libnvtx_tool.so)") != std::string::npos;
  }
  EXPECT_TRUE(said) << k["notes"];
  std::remove(report.c_str());
  std::remove(trace.c_str());
}

#ifdef GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY
// What the stand-in CUPTI logged: calls per (what, number).
std::map<std::pair<std::string, int>, int> fake_cupti_calls(const std::string& log) {
  std::map<std::pair<std::string, int>, int> calls;
  std::istringstream in(read_file(log));
  std::string what;
  int n = 0;
  long long ns = 0;
  while (in >> what >> n >> ns) ++calls[std::make_pair(what, n)];
  return calls;
}

// Windows of 0.2 s every 0.5 s, spread from the job's first CUDA start
// (inject/schedule.hpp); the job lives 1.3 s. Returns the process's record; `log` gets the
// stand-in's calls.
ProcessLines run_windowed_fake_job(const std::string& name, const std::string& log) {
  const std::string trace = temp_path(name + ".jsonl");
  const auto r = run_gpulens(
      "run --kernels --kernels-window 0.2 --kernels-every 0.5 -q " + kReplay + " -o '" + trace +
      ".txt' --trace '" + trace + "' -- env GPULENS_CUPTI='" + GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY +
      "' FAKE_CUPTI_LOG='" + log + "' FAKE_JOB_SLEEP_MS=1300 '" + GPULENS_KERNELS_FAKE_JOB + "' 0");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "fake cuda job output\n");
  const ProcessLines p = by_kind(kernel_records(trace));
  std::remove(trace.c_str());
  std::remove((trace + ".txt").c_str());
  if (p.processes != 1) ADD_FAILURE() << p.processes << " processes wrote records";
  return p;
}

TEST(KernelsRun, CuptiRecordsOnlyInsideTheWindowsAndTheRecordListsThem) {
  const std::string log = temp_path("windows.log");
  const ProcessLines p = run_windowed_fake_job("windows", log);
  ASSERT_TRUE(p.end.is_object());
  EXPECT_EQ(p.end["status"], "ok") << p.end.dump();
  const auto& rec = p.process;
  EXPECT_DOUBLE_EQ(rec["sampling"]["window_s"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(rec["sampling"]["every_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(rec["sampling"]["first_s"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(rec["sampling"]["ramp_s"].get<double>(), 0.4);
  // Windows at 0, 0.585 and 0.971 s after cuInit: the first slot (0.4 s) opens
  // at it, then one per 0.5-s slot at 0.618 and 0.236 of the 0.3 s each leaves.
  // The last one may be cut by the exit, or missed on a loaded machine.
  // Each window went out as its own chunk as it closed.
  nlohmann::json w = nlohmann::json::array();
  for (const auto& c : p.chunks) {
    if (c["window"] == true) w.push_back(c["span"]);
  }
  ASSERT_GE(w.size(), 2u) << rec.dump();
  ASSERT_LE(w.size(), 3u) << rec.dump();
  auto seconds = [](const nlohmann::json& a, const nlohmann::json& b) {
    return static_cast<double>(b.get<std::int64_t>() - a.get<std::int64_t>()) / 1e9;
  };
  const double spacing[] = {0.585, 0.386};
  for (std::size_t i = 0; i + 1 < w.size(); ++i) {
    EXPECT_NEAR(seconds(w[i][0], w[i][1]), 0.2, 0.08) << rec.dump();
    EXPECT_NEAR(seconds(w[i][0], w[i + 1][0]), spacing[i], 0.08) << rec.dump();
  }
  // Nothing of CUPTI before the first window (opened in cuInit); then attached once (our buffers
  // registered, device properties (8) on) and, per window, kernels (10), copies
  // (1) and NVTX markers (12) switched on and off again.
  auto calls = fake_cupti_calls(log);
  const int windows = static_cast<int>(w.size());
  auto count = [&](const char* what, int n) { return calls[std::make_pair(std::string(what), n)]; };
  EXPECT_EQ(count("register", 0), 1) << read_file(log);
  EXPECT_EQ(count("enable", 8), 1);
  for (int kind : {10, 1, 12}) {
    EXPECT_EQ(count("enable", kind), windows) << kind;
    EXPECT_GE(count("disable", kind), windows) << kind;
  }
  std::ifstream first(log);
  std::string what;
  first >> what;
  EXPECT_EQ(what, "register");  // the first call CUPTI saw opened the first window
  std::remove(log.c_str());
}

#ifdef GPULENS_KERNELS_FAKE_JOB
TEST(KernelsRun, KernelsSyncsAsksTheLibraryForSynchronisations) {
  // The library reads GPULENS_KERNELS_SYNCS=1 (inject/cupti_seam.hpp); only
  // --kernels-syncs sets it.
  const std::string out = temp_path("syncs.txt");
  const auto asked = run_gpulens("run --kernels --kernels-syncs -q " + kReplay + " -o '" + out +
                                 "' -- sh -c 'echo \"[$GPULENS_KERNELS_SYNCS]\"'");
  EXPECT_EQ(asked.exit_code, 0) << asked.err;
  EXPECT_EQ(asked.out, "[1]\n");
  const auto plain = run_gpulens("run --kernels -q " + kReplay + " -o '" + out +
                                 "' -- sh -c 'echo \"[$GPULENS_KERNELS_SYNCS]\"'");
  EXPECT_EQ(plain.out, "[]\n");
  std::remove(out.c_str());
}
#endif

TEST(KernelsRun, KernelsSyncsWithoutKernelsIsRefused) {
  const auto r = run_gpulens("run --kernels-syncs -q " + kReplay + " -o '" +
                             temp_path("no_kernels.txt") + "' -- true");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--kernels-syncs requires --kernels"), std::string::npos) << r.err;
}

TEST(KernelsRun, WindowOptionsWithoutKernelsAreRefused) {
  // Without --kernels nothing would be traced: say so rather than ignore them.
  const auto r = run_gpulens("run --kernels-every 0 -q " + kReplay + " -o '" +
                             temp_path("no_kernels.txt") + "' -- true");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--kernels-every requires --kernels"), std::string::npos) << r.err;
}

TEST(KernelsRun, WindowsLongerThanTheirPeriodAreRefused) {
  const auto r = run_gpulens("run --kernels --kernels-window 5 --kernels-every 5 -q " + kReplay +
                             " -o '" + temp_path("refused.txt") + "' -- true");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--kernels-every 0 to trace the whole job"), std::string::npos) << r.err;
}
#endif
#endif

}  // namespace
}  // namespace gpulens

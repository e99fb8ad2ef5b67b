// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the real gpulens binary for end-to-end and golden tests.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "wait_for.hpp"

namespace gpulens::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A reference recording's path from the repository root, by name. The
// calibration recording is committed once, in examples/ (where users find it);
// the others live in tests/fixtures/traces/.
inline std::string reference_trace(const std::string& name) {
  if (name == "calibration-h100") return "examples/calibration-h100.trace.jsonl";
  return "tests/fixtures/traces/" + name + ".trace.jsonl";
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `gpulens ARGS` from the source directory with TZ=UTC, stdin from /dev/null.
inline CommandResult run_gpulens(const std::string& args) {
  // ctest runs test processes in parallel: each call gets its own stderr file.
  static int calls = 0;
  const std::string err_path = ::testing::TempDir() + "/gpulens_stderr_" +
                               std::to_string(getpid()) + "_" + std::to_string(++calls) + ".txt";
  const std::string cmd = std::string("cd '") + GPULENS_SOURCE_DIR + "' && TZ=UTC COLUMNS= '" +
                          GPULENS_BINARY + "' " + args + " </dev/null 2>'" + err_path + "'";
  CommandResult result;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.out.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.err = read_file(err_path);
  std::remove(err_path.c_str());
  return result;
}

// Starts `gpulens ARGS` from the source directory, its stdout and stderr in files and
// stdin from /dev/null, for a test that then signals it or waits for it. No terminal:
// a signal the test sends reaches gpulens alone, as a batch scheduler's does. SIGINT
// keeps its default meaning (a test runner may run us with it ignored, as a
// background job).
inline pid_t start_gpulens(const std::vector<std::string>& args, const std::string& out,
                           const std::string& err) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || in < 0 || chdir(GPULENS_SOURCE_DIR) != 0) _exit(98);
    dup2(in, STDIN_FILENO);
    dup2(o, STDOUT_FILENO);
    dup2(e, STDERR_FILENO);
    signal(SIGINT, SIG_DFL);
    std::vector<std::string> all = {GPULENS_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(GPULENS_BINARY, argv.data());
    _exit(99);
  }
  return pid;
}

// True once the file at `path` holds `text`; false when `seconds` pass first.
inline bool wait_for_file_text(const std::string& path, const std::string& text, double seconds) {
  return wait_for([&] { return read_file(path).find(text) != std::string::npos; }, seconds);
}

// Compares with tests/golden/NAME; GPULENS_UPDATE_GOLDEN=1 rewrites the file instead.
inline void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(GPULENS_SOURCE_DIR) + "/tests/golden/" + name;
  if (const char* update = std::getenv("GPULENS_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  const std::string expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << "missing golden file " << path
                                 << " (run with GPULENS_UPDATE_GOLDEN=1 to create it)";
  if (expected == actual) return;
  // Report the first differing line rather than two huge strings.
  std::istringstream e(expected), a(actual);
  std::string el, al;
  int line = 0;
  while (true) {
    ++line;
    const bool has_e = static_cast<bool>(std::getline(e, el));
    const bool has_a = static_cast<bool>(std::getline(a, al));
    if (!has_e && !has_a) break;
    if (el != al || has_e != has_a) {
      FAIL() << name << " differs at line " << line << "\n  expected: " << el
             << "\n  actual:   " << al
             << "\n(GPULENS_UPDATE_GOLDEN=1 rewrites the golden files on purpose)";
    }
  }
}

}  // namespace gpulens::testing

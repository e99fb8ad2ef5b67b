// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the job that `gpulens run` wraps: the child inherits stdin, stdout and
// stderr untouched and runs in its own process group, made the terminal's
// foreground group when gpulens was (so Ctrl-C from the terminal reaches every
// process of the job, as under a shell's job control); signals gpulens passes on
// go to that whole group. Its exit status becomes ours. With a stdout line
// callback, stdout goes through a pipe that a reader thread copies to ours as it
// arrives, so a child writing megabytes never blocks on us.
#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace gpulens::jobs {

struct ChildOptions {
  std::vector<std::string> argv;                         // argv[0] is looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) ours
  // Called from the reader thread with each stdout line (no newline). Lines longer
  // than 64 KiB are passed in pieces. Empty: stdout is inherited, not piped.
  std::function<void(std::string_view)> on_stdout_line;
};

struct ChildExit {
  std::optional<int> code;    // exited normally with this status
  std::optional<int> signal;  // was killed by this signal
  // What a shell would report: the code, or 128 + the signal.
  int status() const { return signal ? 128 + *signal : code.value_or(0); }
};

class ChildProcess {
 public:
  // Fails when the command cannot be started; `exec_errno` then says why (ENOENT:
  // not found, EACCES: not executable), which a shell turns into 127 or 126.
  static Result<ChildProcess> spawn(ChildOptions options, int* exec_errno = nullptr);

  pid_t pid() const { return pid_; }
  // Blocks until the child ends, then gives its stdout reader up to `drain_s` to
  // copy what is left (a background grandchild may keep the pipe open for longer).
  ChildExit wait(double drain_s = 2.0);
  // Sends a signal to the job's process group; no-op once the child was reaped.
  void kill(int sig) const;

  ChildProcess(ChildProcess&&) noexcept;
  ChildProcess& operator=(ChildProcess&&) noexcept;
  ~ChildProcess();

 private:
  struct Pump;
  ChildProcess() = default;
  pid_t pid_ = -1;
  int tty_ = -1;  // the terminal handed to the job, taken back after wait()
  bool reaped_ = false;
  std::shared_ptr<Pump> pump_;
};

// What a shell prints for a command that could not be started.
int exit_code_for_exec_errno(int err);

}  // namespace gpulens::jobs

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the job that `gpulens run` wraps: the child inherits stdin, stdout and
// stderr (unless relayed, below) and runs in its own process group, made the terminal's
// foreground group when gpulens was (so Ctrl-C from the terminal reaches every
// process of the job, as under a shell's job control); signals gpulens passes on
// go to that whole group. Its exit status becomes ours. With a stdout line
// callback, stdout goes through a pipe that a reader thread copies to ours as it
// arrives, so a child writing megabytes never blocks on us. With a stderr
// callback, stderr is relayed the same way, through a pseudo-terminal when ours
// is a terminal (the job still sees one: isatty, its window size, colours) and a
// pipe otherwise; bytes pass unchanged as they come.
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

class StderrRelay;

struct ChildOptions {
  std::vector<std::string> argv;                         // argv[0] is looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) ours
  // Called from the reader thread with each stdout line (no newline). Lines longer
  // than 64 KiB are passed in pieces. Empty: stdout is inherited, not piped.
  std::function<void(std::string_view)> on_stdout_line;
  // Called from the relay thread with each chunk of stderr once it was copied to
  // ours. Empty: stderr is inherited, not relayed.
  std::function<void(std::string_view)> on_stderr;
};

struct ChildExit {
  std::optional<int> code;    // exited normally with this status
  std::optional<int> signal;  // was killed by this signal
  // How its stderr was read (StderrScan::state's words): "read" (to its end, or
  // all it held once the job exited), "incomplete" (our stderr closed, or the
  // reader still behind when the drain time ran out), "not_captured" (no
  // terminal or pipe could be set up: inherited), "" (not asked for).
  std::string stderr_state;
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
  std::shared_ptr<StderrRelay> relay_;
  bool relay_failed_ = false;  // stderr was to be relayed but is inherited
};

// What a shell prints for a command that could not be started.
int exit_code_for_exec_errno(int err);

}  // namespace gpulens::jobs

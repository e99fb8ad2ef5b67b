// SPDX-License-Identifier: Apache-2.0
#include "jobs/child_process.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "jobs/stderr_relay.hpp"

extern char** environ;  // NOLINT: POSIX declares it nowhere else

namespace gpulens::jobs {

// Copies the child's stdout to ours and hands complete lines to the callback.
// Shared with the thread that runs it, so that a pump still copying for a
// background grandchild may outlive the ChildProcess.
struct ChildProcess::Pump {
  int fd = -1;
  std::function<void(std::string_view)> on_line;
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;

  static constexpr std::size_t kMaxLine = 64 * 1024;

  static bool write_all(int out, const char* p, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(out, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }

  void run() {
    std::string line;
    char buf[64 * 1024];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      const auto len = static_cast<std::size_t>(n);
      // Our stdout is gone (a closed pipe): close the child's end too, so that it
      // sees the same broken pipe it would have seen without us in between.
      if (!write_all(STDOUT_FILENO, buf, len)) break;
      for (std::size_t i = 0; i < len; ++i) {
        if (buf[i] == '\n') {
          on_line(line);
          line.clear();
        } else if (line.size() < kMaxLine) {
          line += buf[i];
        } else {
          on_line(line);
          line.assign(1, buf[i]);
        }
      }
    }
    if (!line.empty()) on_line(line);
    ::close(fd);
    std::lock_guard lock(mutex);
    done = true;
    cv.notify_all();
  }
};

namespace {

std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const auto name = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& [k, _] : extra) replaced = replaced || k == name;
    if (!replaced) env.emplace_back(kv);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

template <typename F>
void with_ttou_blocked(F&& f) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &old);
  f();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// stdin when it is a terminal whose foreground group is ours; else -1.
int foreground_terminal() {
  if (::isatty(STDIN_FILENO) == 0) return -1;
  return ::tcgetpgrp(STDIN_FILENO) == ::getpgrp() ? STDIN_FILENO : -1;
}

// Makes gpulens' group the terminal's foreground again once the job is over.
void take_back_terminal(int tty) {
  if (tty >= 0) with_ttou_blocked([tty] { ::tcsetpgrp(tty, ::getpgrp()); });
}

}  // namespace

int exit_code_for_exec_errno(int err) {
  return err == ENOENT ? 127 : 126;
}

Result<ChildProcess> ChildProcess::spawn(ChildOptions options, int* exec_errno) {
  if (options.argv.empty()) return Error{"no command to run"};
  // Everything the child needs is built before fork: between fork and exec only
  // async-signal-safe calls are allowed, since other threads may hold locks.
  std::vector<std::string> args = options.argv;
  std::vector<std::string> env = child_environment(options.env);
  std::vector<char*> argv = pointers(args);
  std::vector<char*> envp = pointers(env);

  int out_pipe[2] = {-1, -1};
  if (options.on_stdout_line && ::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return Error{std::string("cannot create a pipe: ") + std::strerror(errno)};
  }
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return Error{std::string("cannot create a pipe: ") + std::strerror(errno)};
  }
  // The job's stderr through a pseudo-terminal or a pipe; inherited when neither
  // can be had (the job runs all the same, and its state says so).
  std::shared_ptr<StderrRelay> relay;
  const bool relay_wanted = static_cast<bool>(options.on_stderr);
  if (relay_wanted) {
    std::string why;
    relay = StderrRelay::open(std::move(options.on_stderr), why);
  }
  const bool relay_failed = relay_wanted && relay == nullptr;
  const int stderr_fd = relay ? relay->child_end() : -1;
  // The terminal we hand to the job, as a shell's job control does: only when
  // gpulens itself is the terminal's foreground job.
  const int tty = foreground_terminal();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    if (relay) relay->abandon();
    return Error{std::string("cannot fork: ") + std::strerror(err)};
  }
  if (pid == 0) {
    // Its own process group, so that a signal for the job reaches every process
    // of it (`bash -c 'sleep 30; ...'`: the sleep too), and the terminal's
    // foreground, so that Ctrl-C and reads from the terminal go to the job.
    // SIGTTOU is blocked while a background group takes the terminal.
    sigset_t ttou;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, nullptr);
    ::setpgid(0, 0);
    if (tty >= 0) ::tcsetpgrp(tty, ::getpid());
    // The job starts as a fresh process would: no blocked signals (gpulens blocks
    // SIGINT/SIGTERM for its sigwait thread) and default SIGPIPE (gpulens ignores it).
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (out_pipe[1] >= 0) ::dup2(out_pipe[1], STDOUT_FILENO);
    if (stderr_fd >= 0) ::dup2(stderr_fd, STDERR_FILENO);
    ::execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    [[maybe_unused]] const auto w = ::write(err_pipe[1], &err, sizeof err);
    ::_exit(exit_code_for_exec_errno(err));
  }
  // Both sides set the group (and the terminal's foreground), as shells do: no
  // matter which runs first, the job is in its group before it can be signalled.
  ::setpgid(pid, pid);
  if (tty >= 0) with_ttou_blocked([&] { ::tcsetpgrp(tty, pid); });
  ::close(err_pipe[1]);
  if (out_pipe[1] >= 0) ::close(out_pipe[1]);
  // The error pipe closes on a successful exec (CLOEXEC): EOF means the job runs.
  int err = 0;
  ssize_t n;
  do {
    n = ::read(err_pipe[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  ::close(err_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (out_pipe[0] >= 0) ::close(out_pipe[0]);
    if (relay) relay->abandon();
    take_back_terminal(tty);
    if (exec_errno != nullptr) *exec_errno = err;
    return Error{"cannot run '" + options.argv[0] + "': " + std::strerror(err)};
  }
  ChildProcess child;
  child.pid_ = pid;
  child.tty_ = tty;
  child.relay_failed_ = relay_failed;
  if (relay) {
    relay->start(relay);
    child.relay_ = std::move(relay);
  }
  if (out_pipe[0] >= 0) {
    auto pump = std::make_shared<Pump>();
    pump->fd = out_pipe[0];
    pump->on_line = std::move(options.on_stdout_line);
    child.pump_ = pump;
    std::thread([pump] { pump->run(); }).detach();
  }
  return child;
}

ChildExit ChildProcess::wait(double drain_s) {
  ChildExit exit;
  if (pid_ <= 0 || reaped_) return exit;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return exit;
  }
  reaped_ = true;
  take_back_terminal(tty_);
  if (WIFEXITED(status)) exit.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  // Both streams drain at once, within one deadline.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(drain_s));
  if (relay_) exit.stderr_state = relay_->finish(deadline);
  if (relay_failed_) exit.stderr_state = "not_captured";
  if (pump_) {
    std::unique_lock lock(pump_->mutex);
    pump_->cv.wait_until(lock, deadline, [&] { return pump_->done; });
  }
  return exit;
}

void ChildProcess::kill(int sig) const {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, sig);  // the job's whole process group
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      tty_(std::exchange(o.tty_, -1)),
      reaped_(o.reaped_),
      pump_(std::move(o.pump_)),
      relay_(std::move(o.relay_)),
      relay_failed_(o.relay_failed_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  pid_ = std::exchange(o.pid_, -1);
  tty_ = std::exchange(o.tty_, -1);
  reaped_ = o.reaped_;
  pump_ = std::move(o.pump_);
  relay_ = std::move(o.relay_);
  relay_failed_ = o.relay_failed_;
  return *this;
}

// A child never waited for is left running: killing a user's job is never a
// side effect of an error in gpulens.
ChildProcess::~ChildProcess() = default;

}  // namespace gpulens::jobs

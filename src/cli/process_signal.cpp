// SPDX-License-Identifier: Apache-2.0
#include "cli/process_signal.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "sources/host/file_buffer.hpp"
#include "sources/host/procfs_parse.hpp"

// Linux gives new system calls the same number on every architecture since 5.1.
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

namespace gpulens::cli {
namespace {

class SystemKernel final : public SignalKernel {
 public:
  int may_signal(std::uint32_t pid) override {
    return ::kill(static_cast<pid_t>(pid), 0) == 0 ? 0 : errno;
  }
  int pidfd_open(std::uint32_t pid) override {
    const long fd = syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0U);
    return fd >= 0 ? static_cast<int>(fd) : -errno;
  }
  int pidfd_send(int fd, int signal) override {
    return syscall(SYS_pidfd_send_signal, fd, signal, nullptr, 0U) == 0 ? 0 : errno;
  }
  int kill(std::uint32_t pid, int signal) override {
    return ::kill(static_cast<pid_t>(pid), signal) == 0 ? 0 : errno;
  }
  void close(int fd) override { ::close(fd); }
};

const char* signal_name(int sig) {
  return sig == SIGKILL ? "SIGKILL" : sig == SIGINT ? "SIGINT" : "SIGTERM";
}

std::string pid_text(std::uint32_t pid) {
  return "PID " + std::to_string(pid);
}

std::string gone(std::uint32_t pid) {
  return pid_text(pid) +
         " is no longer the process listed (it exited or the PID was reused); nothing sent";
}

class LiveSignaller final : public tui::ProcessSignaller {
 public:
  LiveSignaller(std::string procfs_root, std::shared_ptr<SignalKernel> kernel)
      : root_(std::move(procfs_root)), kernel_(std::move(kernel)) {}

  std::string vet(tui::PendingSignal& s) override {
    if (std::string why = refused(s.pid); !why.empty()) return why;
    if (!s.start_ticks || s.listed_name.empty()) {
      // The host source could not read it when it was listed: another PID namespace
      // (a container without hostPID), or it exited at once.
      return pid_text(s.pid) + " was not found in this machine's /proc when listed; nothing sent";
    }
    if (std::string why = same_process(s.pid, *s.start_ticks, s.listed_name); !why.empty()) {
      return why;
    }
    if (const int err = kernel_->may_signal(s.pid); err != 0) {
      return "cannot signal " + pid_text(s.pid) + " (" + s.listed_name + "): " + std::strerror(err);
    }
    s.command = s.listed_name;  // the local name, now checked to be the listed one
    return "";
  }

  std::string send(const tui::PendingSignal& s) override {
    if (std::string why = refused(s.pid); !why.empty()) return why;
    if (!s.start_ticks) return gone(s.pid);
    // The check, then a pidfd (which pins whatever process holds the PID now), then the
    // check again: if both agree, the pidfd is the process that was listed and shown.
    if (std::string why = same_process(s.pid, *s.start_ticks, s.command); !why.empty()) {
      return why;
    }
    const int fd = kernel_->pidfd_open(s.pid);
    int err = 0;
    if (fd == -ENOSYS) {
      err = kernel_->kill(s.pid, s.signal);  // no pidfds (Linux before 5.3)
    } else if (fd < 0) {
      return -fd == ESRCH ? gone(s.pid)
                          : "cannot signal " + pid_text(s.pid) + ": " + std::strerror(-fd);
    } else {
      std::string why = same_process(s.pid, *s.start_ticks, s.command);
      if (why.empty()) {
        err = kernel_->pidfd_send(fd, s.signal);
        if (err == ENOSYS) err = kernel_->kill(s.pid, s.signal);
      }
      kernel_->close(fd);
      if (!why.empty()) return why;
    }
    if (err == ESRCH) return gone(s.pid);
    if (err != 0) return "cannot signal " + pid_text(s.pid) + ": " + std::strerror(err);
    return std::string("sent ") + signal_name(s.signal) + " to " + pid_text(s.pid) + " (" +
           s.command + ")";
  }

 private:
  // Never 0 or 1 (0 would signal our own process group), never ourselves.
  static std::string refused(std::uint32_t pid) {
    if (pid <= 1 || static_cast<pid_t>(pid) == getpid()) return "will not signal " + pid_text(pid);
    return "";
  }

  std::string same_process(std::uint32_t pid, std::uint64_t start_ticks,
                           const std::string& name) const {
    const auto now = read_process_identity(root_, pid);
    if (!now || now->start_ticks != start_ticks) return gone(pid);
    if (now->comm != name) {
      return pid_text(pid) + " is now '" + now->comm + "', not '" + name +
             "' as listed; nothing sent";
    }
    return "";
  }

  std::string root_;
  std::shared_ptr<SignalKernel> kernel_;
};

}  // namespace

Result<ProcessIdentity> read_process_identity(const std::string& procfs_root, std::uint32_t pid) {
  const std::string path = procfs_root + "/" + std::to_string(pid) + "/stat";
  sources::FileBuffer buf;
  if (const int err = buf.read(path.c_str()); err != 0) {
    return Error{path + ": " + std::strerror(err)};
  }
  auto stat = sources::parse_pid_stat(buf.view());
  if (!stat) return Error{path + ": " + stat.error().message};
  return ProcessIdentity{stat->start_ticks, stat->comm};
}

std::shared_ptr<SignalKernel> system_signal_kernel() {
  return std::make_shared<SystemKernel>();
}

std::unique_ptr<tui::ProcessSignaller> make_process_signaller(
    const sources::TickSource& source, std::string procfs_root,
    std::shared_ptr<SignalKernel> kernel) {
  if (!source.live()) return nullptr;
  return std::make_unique<LiveSignaller>(std::move(procfs_root), std::move(kernel));
}

}  // namespace gpulens::cli

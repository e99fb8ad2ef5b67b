// SPDX-License-Identifier: Apache-2.0
#include "jobs/stderr_relay.hpp"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace gpulens::jobs {
namespace {

// How often the window size is looked at while the job writes nothing: the
// terminal sends SIGWINCH to its foreground group, the job, not to gpulens.
constexpr int kIdlePollMs = 100;
// After the job exited, this long without a byte means all it wrote was read.
constexpr int kCaughtUpMs = 50;

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

std::shared_ptr<StderrRelay> StderrRelay::open(std::function<void(std::string_view)> on_bytes,
                                               std::string& why) {
  if (::fcntl(STDERR_FILENO, F_GETFD) < 0) {
    why = "gpulens has no stderr";
    return nullptr;
  }
  auto relay = std::make_shared<StderrRelay>();
  relay->on_bytes_ = std::move(on_bytes);
  if (::isatty(STDERR_FILENO) != 0) {
    // posix_openpt, not openpty: glibc moved openpty from libutil into libc at
    // 2.34, above the binaries' glibc floor (docs/serve.md).
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char name[128] = {};
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 ||
        ::ptsname_r(master, name, sizeof name) != 0) {
      why = errno_text("cannot open a pseudo-terminal");
      if (master >= 0) ::close(master);
      return nullptr;
    }
    const int slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
      why = errno_text("cannot open a pseudo-terminal");
      ::close(master);
      return nullptr;
    }
    // Our terminal's settings, less output processing: the bytes reach our
    // terminal as the job wrote them, and it turns "\n" into "\r\n" itself.
    termios t{};
    if (::tcgetattr(STDERR_FILENO, &t) == 0) {
      t.c_oflag &= ~static_cast<tcflag_t>(OPOST);
      ::tcsetattr(slave, TCSANOW, &t);
    }
    relay->read_fd_ = master;
    relay->child_fd_ = slave;
    relay->pty_ = true;
    relay->sync_window_size();
    return relay;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    why = errno_text("cannot create a pipe");
    return nullptr;
  }
  relay->read_fd_ = fds[0];
  relay->child_fd_ = fds[1];
  return relay;
}

void StderrRelay::sync_window_size() {
  if (!pty_) return;
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) != 0) return;
  if (ws.ws_row == rows_ && ws.ws_col == cols_) return;
  rows_ = ws.ws_row;
  cols_ = ws.ws_col;
  ::ioctl(read_fd_, TIOCSWINSZ, &ws);
}

void StderrRelay::start(std::shared_ptr<StderrRelay> self) {
  ::close(child_fd_);
  child_fd_ = -1;
  std::thread([self = std::move(self)] { self->run(); }).detach();
}

void StderrRelay::abandon() {
  for (int* fd : {&read_fd_, &child_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  std::lock_guard lock(mutex_);
  ended_ = true;
}

// Our stderr as the job would have written it. EPIPE (a reader that went away)
// ends the copy and closes the job's pipe, so the job meets the broken pipe it
// would have met; any other refusal stops the writing but not the reading, so the
// job never blocks on a full pipe.
bool StderrRelay::copy_out(const char* p, std::size_t n) {
  while (writing_ && n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, p, n);
    if (w >= 0) {
      p += w;
      n -= static_cast<std::size_t>(w);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {  // a non-blocking stderr shared with someone: wait for room
      pollfd out{STDERR_FILENO, POLLOUT, 0};
      ::poll(&out, 1, kIdlePollMs);
      continue;
    }
    if (errno == EPIPE) return false;
    writing_ = false;
  }
  return true;
}

void StderrRelay::run() {
  static constexpr std::size_t kChunk = 64 * 1024;
  auto buf = std::make_unique<char[]>(kChunk);
  bool gave_up = false;
  while (true) {
    sync_window_size();
    const bool exited = exited_.load();
    pollfd in{read_fd_, POLLIN, 0};
    const int ready = ::poll(&in, 1, exited ? kCaughtUpMs : kIdlePollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) {
      if (exited && ready == 0) {
        std::lock_guard lock(mutex_);
        caught_up_ = true;
        cv_.notify_all();
      }
      continue;
    }
    const ssize_t n = ::read(read_fd_, buf.get(), kChunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    // A pseudo-terminal says EIO once every process closed its end: the end.
    if (n <= 0) break;
    const auto len = static_cast<std::size_t>(n);
    if (!copy_out(buf.get(), len)) {
      gave_up = true;
      break;
    }
    on_bytes_(std::string_view(buf.get(), len));
  }
  ::close(read_fd_);
  std::lock_guard lock(mutex_);
  ended_ = true;
  gave_up_ = gave_up;
  cv_.notify_all();
}

std::string StderrRelay::finish(std::chrono::steady_clock::time_point deadline) {
  exited_.store(true);
  std::unique_lock lock(mutex_);
  const bool done = cv_.wait_until(lock, deadline, [this] { return ended_ || caught_up_; });
  return done && !gave_up_ ? "read" : "incomplete";
}

StderrRelay::~StderrRelay() {
  if (child_fd_ >= 0) ::close(child_fd_);
}

}  // namespace gpulens::jobs

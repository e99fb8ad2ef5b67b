// SPDX-License-Identifier: Apache-2.0
#include "core/regular_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpulens {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

// `fd` when it is open on a regular file; else closed, and what stood there.
Result<int> regular_only(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Error{std::strerror(err)};
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{fmt::format("not a regular file ({})", kind_of(st.st_mode))};
  }
  return fd;
}

// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
constexpr int kOpenFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

}  // namespace

Result<int> open_regular_file(const std::string& path, bool* missing) {
  if (missing != nullptr) *missing = false;
  const int fd = ::open(path.c_str(), kOpenFlags);
  if (fd < 0) {
    const int err = errno;
    if (missing != nullptr) *missing = err == ENOENT;
    return Error{std::strerror(err)};
  }
  return regular_only(fd);
}

Result<int> open_regular_file_at(int dir_fd, const std::string& name) {
  const int fd = ::openat(dir_fd, name.c_str(), kOpenFlags | O_NOFOLLOW);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return Error{"not a regular file (a symbolic link)"};
    return Error{std::strerror(err)};
  }
  return regular_only(fd);
}

Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes) {
  auto fd = open_regular_file(path);
  if (!fd) return fd.error();
  std::string out;
  char buf[64 * 1024];
  while (true) {
    const ssize_t n = ::read(*fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(*fd);
      return Error{std::strerror(err)};
    }
    if (n == 0) break;
    // Checked as it grows: a file that grows while read is bounded all the same.
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(*fd);
      return Error{fmt::format("larger than {} bytes", max_bytes)};
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(*fd);
  return out;
}

}  // namespace gpulens

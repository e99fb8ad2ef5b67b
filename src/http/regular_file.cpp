#include "http/regular_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpulens::server {

Result<std::string> read_regular_file(const std::string& path, std::string_view what) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Error{fmt::format("cannot read {} {}: {}", what, path, std::strerror(errno))};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{fmt::format("{} {} is not a regular file", what, path)};
  }
  if (static_cast<std::size_t>(st.st_size) > kMaxConfigFileBytes) {
    ::close(fd);
    return Error{fmt::format("{} {} is larger than {} MiB", what, path, kMaxConfigFileBytes >> 20)};
  }
  std::string out;
  char buf[65536];
  while (out.size() <= kMaxConfigFileBytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return Error{fmt::format("cannot read {} {}: {}", what, path, std::strerror(error))};
    }
    break;
  }
  ::close(fd);
  if (out.size() > kMaxConfigFileBytes)  // it grew while read
    return Error{fmt::format("{} {} is larger than {} MiB", what, path, kMaxConfigFileBytes >> 20)};
  return out;
}

}  // namespace gpulens::server

#include "sources/host/file_buffer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gpulens {

int FileBuffer::read(const char* path, std::size_t max_bytes) {
  size_ = 0;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = 0;
  if (data_.empty()) data_.resize(4096);
  while (size_ < max_bytes) {
    if (size_ == data_.size()) data_.resize(std::min(data_.size() * 2, max_bytes));
    const auto room = std::min(data_.size(), max_bytes) - size_;
    const auto n = ::read(fd, data_.data() + size_, room);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;  // ESRCH: the process exited between open and read
      size_ = 0;
      break;
    }
    if (n == 0) break;
    size_ += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return err;
}

}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
#include "sources/host/file_buffer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gpulens::sources {

int FileBuffer::read(const char* path, std::size_t max_bytes) {
  size_ = 0;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int err = read_from(fd, max_bytes);
  ::close(fd);
  return err;
}

int FileBuffer::read_from(int fd, std::size_t max_bytes) {
  size_ = 0;
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
  return err;
}

KeptOpenFile::~KeptOpenFile() {
  close();
}

void KeptOpenFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int KeptOpenFile::read(const char* path, FileBuffer& into) {
  if (fd_ >= 0 && ::lseek(fd_, 0, SEEK_SET) == 0 && into.read_from(fd_) == 0) return 0;
  close();
  fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return errno;
  const int err = into.read_from(fd_);
  if (err != 0) close();
  return err;
}

}  // namespace gpulens::sources

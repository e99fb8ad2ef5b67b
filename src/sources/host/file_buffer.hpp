// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads procfs files with plain POSIX calls into a buffer that is reused across ticks:
// the host source runs every 100 ms on busy nodes, so no iostreams and, once the buffer
// has grown to fit, no allocation.
#include <cstddef>
#include <string_view>
#include <vector>

namespace gpulens::sources {

class FileBuffer {
 public:
  // procfs files are generated on read; this caps a runaway one (a huge cmdline).
  static constexpr std::size_t kDefaultMaxBytes = 1 << 20;

  // Reads the whole file (at most max_bytes, the rest is dropped). Returns 0, or the
  // errno of the failure (ENOENT when the process is gone or in another namespace).
  int read(const char* path, std::size_t max_bytes = kDefaultMaxBytes);
  // The same from an open descriptor, from its current offset to the end.
  int read_from(int fd, std::size_t max_bytes = kDefaultMaxBytes);
  std::string_view view() const { return {data_.data(), size_}; }

 private:
  std::vector<char> data_;
  std::size_t size_ = 0;
};

// A file read again every tick (/proc/stat) stays open: rewinding to offset 0 makes
// procfs generate it afresh, and it saves the path walk and the kernel's per-open
// buffer. On the H100 VM the sampler's host read fell from 0.088 to 0.056 ms a tick
// with it (bench/results/overhead-h100.txt, GPM off). A file replaced by rename keeps
// being read from the old inode; procfs files never are.
class KeptOpenFile {
 public:
  KeptOpenFile() = default;
  ~KeptOpenFile();
  KeptOpenFile(const KeptOpenFile&) = delete;
  KeptOpenFile& operator=(const KeptOpenFile&) = delete;

  // Reads `path` into `into`, opening it on first use. A failed rewind or read closes
  // the descriptor and tries once with a fresh open. Returns 0 or that open's errno.
  int read(const char* path, FileBuffer& into);

 private:
  void close();
  int fd_ = -1;
};

}  // namespace gpulens::sources

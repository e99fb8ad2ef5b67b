#pragma once
// Reads procfs files with plain POSIX calls into a buffer that is reused across ticks:
// the host source runs every 100 ms on busy nodes, so no iostreams and, once the buffer
// has grown to fit, no allocation.
#include <cstddef>
#include <string_view>
#include <vector>

namespace gpulens {

class FileBuffer {
 public:
  // procfs files are generated on read; this caps a runaway one (a huge cmdline).
  static constexpr std::size_t kDefaultMaxBytes = 1 << 20;

  // Reads the whole file (at most max_bytes, the rest is dropped). Returns 0, or the
  // errno of the failure (ENOENT when the process is gone or in another namespace).
  int read(const char* path, std::size_t max_bytes = kDefaultMaxBytes);
  std::string_view view() const { return {data_.data(), size_}; }

 private:
  std::vector<char> data_;
  std::size_t size_ = 0;
};

}  // namespace gpulens

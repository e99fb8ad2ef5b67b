// SPDX-License-Identifier: Apache-2.0
#include "cli/records_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpulens::cli {

namespace fs = std::filesystem;

std::shared_ptr<const int> make_records_dir(const std::string& path, std::string& why) {
  std::error_code ec;
  fs::create_directories(path, ec);
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    why = std::strerror(errno);
    return nullptr;
  }
  return std::shared_ptr<const int>(new int(fd), [](const int* p) {
    ::close(*p);
    delete p;
  });
}

std::vector<fs::path> list_records(int dir_fd, const std::vector<std::string>& extensions) {
  std::vector<fs::path> files;
  const int listing = dir_fd < 0 ? -1 : ::dup(dir_fd);  // closedir closes what it is given
  DIR* dir = listing < 0 ? nullptr : ::fdopendir(listing);
  if (dir == nullptr) {
    if (listing >= 0) ::close(listing);
    return files;
  }
  ::rewinddir(dir);
  while (const dirent* e = ::readdir(dir)) {
    const fs::path name = e->d_name;
    if (std::find(extensions.begin(), extensions.end(), name.extension().string()) !=
        extensions.end()) {
      files.push_back(name);
    }
  }
  ::closedir(dir);
  std::sort(files.begin(), files.end());
  return files;
}

void remove_records_dir(const std::string& path, int dir_fd) {
  struct stat held {};
  struct stat now {};
  if (dir_fd < 0 || ::fstat(dir_fd, &held) != 0 || ::lstat(path.c_str(), &now) != 0) return;
  if (S_ISDIR(now.st_mode) && now.st_dev == held.st_dev && now.st_ino == held.st_ino) {
    ::rmdir(path.c_str());
  }
}

}  // namespace gpulens::cli

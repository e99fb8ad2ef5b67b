// SPDX-License-Identifier: Apache-2.0
#pragma once
// Opening files a job controls (its marks file, its kernel records): the job may
// have swapped them for a FIFO (open() would block until a writer comes, maybe
// never), a device (/dev/zero reads forever) or a directory. These open without
// blocking and accept a regular file only, saying what stood there instead.
#include <cstddef>
#include <string>

#include "core/result.hpp"

namespace gpulens {

// A read-only descriptor (close-on-exec) of `path` when it is a regular file
// (a symbolic link to one is fine); else "not a regular file (a FIFO)", or the
// error of open(2) ("No such file or directory"). `missing`, when given, is set
// when the file does not exist, so callers can wait for it to appear.
Result<int> open_regular_file(const std::string& path, bool* missing = nullptr);

// The same for `name` in the directory `dir_fd`, without following a symbolic link
// there ("not a regular file (a symbolic link)"): for a directory the job can
// write, whose entries may point anywhere gpulens can read.
Result<int> open_regular_file_at(int dir_fd, const std::string& name);

// The whole of a regular file, refused when it holds more than `max_bytes`.
Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes);

}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The directories `gpulens run` makes for what the job's processes write back (the
// kernel records of --kernels, the launch records): the job can write there, so
// gpulens holds each open from the start and reads, lists and removes through that
// descriptor; a job that swaps the path for a link redirects nothing.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace gpulens::cli {

// `path` made (with its parents) and opened as a directory; null when it cannot be,
// with the reason in `why`. Closed when the last copy goes.
std::shared_ptr<const int> make_records_dir(const std::string& path, std::string& why);

// The names in the open directory `dir_fd` whose extension is one of `extensions`
// (".json"), sorted.
std::vector<std::filesystem::path> list_records(int dir_fd,
                                                const std::vector<std::string>& extensions);

// Removes the directory at `path` only while it is still the one open as `dir_fd`
// (the job may have moved it away and put a link or another directory there).
void remove_records_dir(const std::string& path, int dir_fd);

}  // namespace gpulens::cli

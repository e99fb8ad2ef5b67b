// SPDX-License-Identifier: Apache-2.0
#include "verdict/data_files.hpp"

#include <cstdlib>
#include <filesystem>

namespace gpulens::verdict {

std::vector<std::string> data_search_dirs(const std::string& cli_dir, const char* env_dir,
                                          const std::string& system_dir) {
  std::vector<std::string> dirs;
  if (!cli_dir.empty()) dirs.push_back(cli_dir);
  if (env_dir != nullptr && *env_dir != '\0') dirs.emplace_back(env_dir);
  if (!system_dir.empty()) dirs.push_back(system_dir);
  return dirs;
}

std::vector<std::string> data_search_dirs(const std::string& cli_dir) {
  return data_search_dirs(cli_dir, std::getenv("GPULENS_DATA_DIR"));
}

std::optional<std::string> find_data_file(const std::string& file_name,
                                          const std::vector<std::string>& dirs) {
  namespace fs = std::filesystem;
  for (const auto& dir : dirs) {
    const fs::path candidate = fs::path(dir) / file_name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return std::nullopt;
}

// The path in the source tree it was compiled from: the name the docs use, and
// the label the reference reports carry.
std::string builtin_data_origin(const std::string& file_name) {
  return "data/" + file_name;
}

}  // namespace gpulens::verdict

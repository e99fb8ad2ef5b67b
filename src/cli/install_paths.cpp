// SPDX-License-Identifier: Apache-2.0
#include "cli/install_paths.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace gpulens::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kExample = "examples/calibration-h100.trace.jsonl";

// The source tree a CMake build directory was configured from, read from its
// CMakeCache.txt (CMAKE_HOME_DIRECTORY), or empty when `dir` is not a build tree.
fs::path source_dir_of_build(const fs::path& dir) {
  std::ifstream cache(dir / "CMakeCache.txt");
  const std::string key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
  for (std::string line; std::getline(cache, line);) {
    if (line.rfind(key, 0) == 0) return fs::path(line.substr(key.size()));
  }
  return {};
}

}  // namespace

std::string example_recording_for(const fs::path& exe) {
  std::error_code ec;
  const fs::path dir = exe.parent_path();
  const fs::path installed = (dir / ".." / "share/gpulens" / kExample).lexically_normal();
  if (fs::is_regular_file(installed, ec)) return installed.string();
  if (const fs::path source = source_dir_of_build(dir); !source.empty()) {
    const fs::path in_source = (source / kExample).lexically_normal();
    if (fs::is_regular_file(in_source, ec)) return in_source.string();
  }
  return installed.string();
}

std::string example_recording() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  // Without /proc, the path a distribution package installs it at.
  if (ec) return std::string("/usr/share/gpulens/") + kExample;
  return example_recording_for(exe);
}

std::string private_library_for(const std::string& exe_dir, const std::string& name) {
  for (const std::string& rel : {name, "../lib/gpulens/" + name}) {
    const std::filesystem::path candidate = std::filesystem::path(exe_dir) / rel;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) {
      return std::filesystem::weakly_canonical(candidate, ec).string();
    }
  }
  return {};
}

std::string private_library(const char* override_var, const std::string& name) {
  if (const char* env = std::getenv(override_var); env != nullptr && *env != '\0') {
    std::error_code ec;
    return std::filesystem::is_regular_file(env, ec) ? std::string(env) : std::string();
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : private_library_for(exe.parent_path().string(), name);
}

}  // namespace gpulens::cli

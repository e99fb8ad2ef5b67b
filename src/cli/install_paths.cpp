// SPDX-License-Identifier: Apache-2.0
#include "cli/install_paths.hpp"

#include <filesystem>
#include <system_error>

namespace gpulens::cli {
namespace {

constexpr const char* kExample = "examples/calibration-h100.trace.jsonl";

}  // namespace

std::string example_recording() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // A prefix moved as a whole (dpkg -x, DESTDIR, the image) still finds its own.
    const fs::path beside = exe.parent_path().parent_path() / "share/gpulens" / kExample;
    if (fs::is_regular_file(beside, ec)) return beside.lexically_normal().string();
  }
  return std::string(GPULENS_INSTALL_FULL_DATADIR) + "/" + kExample;
}

}  // namespace gpulens::cli

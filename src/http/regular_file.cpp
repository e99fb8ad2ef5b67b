// SPDX-License-Identifier: Apache-2.0
#include "http/regular_file.hpp"

#include <fmt/format.h>

#include "core/regular_file.hpp"

namespace gpulens::http {

Result<std::string> read_regular_file(const std::string& path, std::string_view what) {
  // The one reader of files others may have swapped (core/regular_file.hpp):
  // non-blocking open, regular files only, bounded while read.
  auto text = gpulens::read_regular_file(path, kMaxConfigFileBytes);
  if (!text) return Error{fmt::format("cannot read {} {}: {}", what, path, text.error().message)};
  return text;
}

}  // namespace gpulens::http

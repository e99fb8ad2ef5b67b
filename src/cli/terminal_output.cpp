// SPDX-License-Identifier: Apache-2.0
#include "cli/terminal_output.hpp"

#include <cstdio>

#include "core/text_safety.hpp"

namespace gpulens::cli {

void print_to_stderr(std::string_view text) {
  const std::string safe = terminal_safe_text(text);
  std::fwrite(safe.data(), 1, safe.size(), stderr);
}

}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every message gpulens writes on stderr goes through eprint: errors and warnings
// quote recordings, config files, marks and process names, which others choose,
// so the text is made terminal_safe_text (core/text_safety) on its way out. The
// reports on stdout are made safe by their renderers (render/*_text.cpp, tui).
#include <fmt/format.h>

#include <string_view>
#include <utility>

namespace gpulens::cli {

// Writes `text` to stderr with every control but '\n' replaced.
void print_to_stderr(std::string_view text);

template <typename... Args>
void eprint(fmt::format_string<Args...> format, Args&&... args) {
  print_to_stderr(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace gpulens::cli

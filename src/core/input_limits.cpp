// SPDX-License-Identifier: Apache-2.0
#include "core/input_limits.hpp"

#include <fmt/format.h>

namespace gpulens {

std::size_t json_string_end(std::string_view text, std::size_t open) {
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i;
    }
  }
  return text.size();
}

bool json_nesting_exceeds(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '"':
        i = json_string_end(text, i);
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return true;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return false;
}

Result<nlohmann::json> parse_json_bounded(std::string_view text) {
  if (json_nesting_exceeds(text)) {
    return Error{fmt::format("nested deeper than {} levels", kMaxJsonDepth)};
  }
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{"not valid JSON"};
  return j;
}

LineRead read_line_bounded(std::istream& in, std::string& line, std::size_t max_bytes) {
  line.clear();
  std::streambuf* buf = in.rdbuf();
  if (buf == nullptr) {
    in.setstate(std::ios::eofbit | std::ios::failbit);
    return LineRead::End;
  }
  bool any = false;
  while (true) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return any ? LineRead::Line : LineRead::End;
    }
    any = true;
    if (c == '\n') return LineRead::Line;
    if (line.size() >= max_bytes) {
      buf->sungetc();
      return LineRead::TooLong;
    }
    line.push_back(static_cast<char>(c));
  }
}

void skip_line(std::istream& in) {
  std::streambuf* buf = in.rdbuf();
  if (buf == nullptr) return;
  while (true) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return;
    }
    if (c == '\n') return;
  }
}

}  // namespace gpulens

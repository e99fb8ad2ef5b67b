// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small allocation-free scanning helpers shared by the procfs and cgroup parsers.
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpulens::sources::text_scan {

// Cuts the next '\n'-terminated line off the front of `rest` (without the '\n').
inline std::string_view next_line(std::string_view& rest) {
  const auto nl = rest.find('\n');
  const auto line = rest.substr(0, nl);
  rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  return line;
}

inline bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

// Cuts the next blank-separated token off the front of `rest`; empty at the end.
inline std::string_view next_token(std::string_view& rest) {
  std::size_t i = 0;
  while (i < rest.size() && is_blank(rest[i])) ++i;
  std::size_t j = i;
  while (j < rest.size() && !is_blank(rest[j])) ++j;
  const auto token = rest.substr(i, j - i);
  rest.remove_prefix(j);
  return token;
}

// The whole token as an unsigned decimal; nullopt for anything else ("", "-1", "12x").
template <typename T = std::uint64_t>
std::optional<T> to_unsigned(std::string_view token) {
  T value{};
  const auto* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (token.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

inline bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace gpulens::sources::text_scan

// SPDX-License-Identifier: Apache-2.0
#include "core/text_safety.hpp"

#include <cstddef>

namespace gpulens {
namespace {

// The length of the valid UTF-8 sequence at the start of `s` and its code point,
// or 0 when the first byte does not start one (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
std::size_t decode(std::string_view s, char32_t& cp) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // a continuation byte, C0/C1 overlong leads, F5..FF
  }
  if (s.size() < len) return 0;
  for (std::size_t i = 1; i < len; ++i) {
    const unsigned char b = byte(i);
    if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  return len;
}

bool forbidden(char32_t cp, bool keep_newlines) {
  if (cp == U'\n') return !keep_newlines;
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

bool plain_ascii(unsigned char c, bool keep_newlines) {
  return (c >= 0x20 && c < 0x7F) || (keep_newlines && c == '\n');
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view text) {
  char32_t cp = 0;
  return decode(text, cp);
}

void append_terminal_safe(std::string& out, std::string_view text, bool keep_newlines) {
  out.reserve(out.size() + text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    // Runs of printable ASCII, the common case, are copied whole.
    std::size_t run = i;
    while (run < text.size() && plain_ascii(static_cast<unsigned char>(text[run]), keep_newlines)) {
      ++run;
    }
    out.append(text.substr(i, run - i));
    i = run;
    if (i == text.size()) break;
    char32_t cp = 0;
    const std::size_t len = decode(text.substr(i), cp);
    if (len == 0 || forbidden(cp, keep_newlines)) {
      out += kReplacementCharacter;
      i += len == 0 ? 1 : len;  // an invalid byte is replaced alone; a control whole
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
}

std::string terminal_safe(std::string_view text) {
  std::string out;
  append_terminal_safe(out, text, false);
  return out;
}

std::string terminal_safe_text(std::string_view text) {
  std::string out;
  append_terminal_safe(out, text, true);
  return out;
}

bool is_terminal_safe(std::string_view text, bool keep_newlines) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (plain_ascii(static_cast<unsigned char>(text[i]), keep_newlines)) {
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t len = decode(text.substr(i), cp);
    if (len == 0 || forbidden(cp, keep_newlines)) return false;
    i += len;
  }
  return true;
}

}  // namespace gpulens

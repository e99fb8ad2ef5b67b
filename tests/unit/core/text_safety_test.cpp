// SPDX-License-Identifier: Apache-2.0
// core/text_safety: what a hostile name becomes before it reaches a terminal.
#include "core/text_safety.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpulens {
namespace {

const std::string_view R = kReplacementCharacter;

// Pieces joined (never "literal" + std::string: GCC 12's false -Wrestrict at -O3).
std::string j(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (const auto p : pieces) out += p;
  return out;
}

struct SafetyCase {
  const char* what;
  std::string in;
  std::string name;  // terminal_safe
  std::string text;  // terminal_safe_text
};

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (const int c : b) s += static_cast<char>(c);
  return s;
}

TEST(TextSafety, TableOfHostileAndBenignInputs) {
  const SafetyCase cases[] = {
      {"plain ASCII", "python train.py --lr 3e-4", "python train.py --lr 3e-4",
       "python train.py --lr 3e-4"},
      {"empty", "", "", ""},
      {"micro sign, accents", "12 µs, café, naïve", "12 µs, café, naïve", "12 µs, café, naïve"},
      {"CJK and emoji", "训练进程 🚀", "训练进程 🚀", "训练进程 🚀"},
      {"the issue's retitle-and-clear name", "N\x1b]0;PWNED\x07\x1b[2J",
       j({"N", R, "]0;PWNED", R, R, "[2J"}), j({"N", R, "]0;PWNED", R, R, "[2J"})},
      {"newline: a forged line in a name, kept in free text", "a\nverdict ok",
       j({"a", R, "verdict ok"}), "a\nverdict ok"},
      {"tab, carriage return, backspace, NUL", bytes({'a', '\t', 'b', '\r', 'c', '\b', 0, 'd'}),
       j({"a", R, "b", R, "c", R, R, "d"}), j({"a", R, "b", R, "c", R, R, "d"})},
      {"DEL", "x\x7fy", j({"x", R, "y"}), j({"x", R, "y"})},
      {"C1 CSI encoded in UTF-8 (U+009B)",
       "a\xc2\x9b"
       "2Jb",
       j({"a", R, "2Jb"}), j({"a", R, "2Jb"})},
      {"C1 NEL and OSC (U+0085, U+009D)", "\xc2\x85\xc2\x9d", j({R, R}), j({R, R})},
      {"raw 8-bit CSI byte 0x9B",
       "a\x9b"
       "2J",
       j({"a", R, "2J"}), j({"a", R, "2J"})},
      {"U+00A0 just above C1 is text",
       "a\xc2\xa0"
       "b",
       "a\xc2\xa0"
       "b",
       "a\xc2\xa0"
       "b"},
      {"bidi override U+202E",
       "evil\xe2\x80\xae"
       "gpj.exe",
       j({"evil", R, "gpj.exe"}), j({"evil", R, "gpj.exe"})},
      {"bidi embeddings U+202A..U+202D", "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad",
       j({R, R, R, R}), j({R, R, R, R})},
      {"bidi isolates U+2066..U+2069", "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9",
       j({R, R, R, R}), j({R, R, R, R})},
      {"U+2065 and U+206A beside the isolates are left", "\xe2\x81\xa5\xe2\x81\xaa",
       "\xe2\x81\xa5\xe2\x81\xaa", "\xe2\x81\xa5\xe2\x81\xaa"},
      {"invalid byte 0xFF",
       "a\xff"
       "b",
       j({"a", R, "b"}), j({"a", R, "b"})},
      {"truncated sequence at the end", "ab\xe2\x82", j({"ab", R, R}), j({"ab", R, R})},
      {"overlong ESC (C0 9B) and overlong slash", "\xc0\x9b\xe0\x80\xaf", j({R, R, R, R, R}),
       j({R, R, R, R, R})},
      {"UTF-16 surrogate encoded", "\xed\xa0\x80", j({R, R, R}), j({R, R, R})},
      {"above U+10FFFF", "\xf4\x90\x80\x80", j({R, R, R, R}), j({R, R, R, R})},
      {"largest code point is text", "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(terminal_safe(c.in), c.name);
    EXPECT_EQ(terminal_safe_text(c.in), c.text);
    EXPECT_EQ(is_terminal_safe(c.in, false), c.in == c.name);
    EXPECT_EQ(is_terminal_safe(c.in, true), c.in == c.text);
    // Safe output stays as it is: applying it again changes nothing.
    EXPECT_EQ(terminal_safe(c.name), c.name);
    EXPECT_EQ(terminal_safe_text(c.text), c.text);
  }
}

TEST(TextSafety, NoByteOfAnyInputReachesTheTerminalAsAControl) {
  // Every single byte, and every byte after a lead byte: the output never holds a
  // C0 control, DEL, or a byte 0x80..0x9F outside a valid multi-byte sequence.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; b += 17) {
      const std::string in = bytes({a, b, 'x'});
      const std::string out = terminal_safe(in);
      ASSERT_TRUE(is_terminal_safe(out, false)) << a << "," << b;
      for (const char ch : out) {
        const auto u = static_cast<unsigned char>(ch);
        ASSERT_TRUE(u >= 0x20 && u != 0x7F) << a << "," << b;
      }
    }
  }
}

TEST(TextSafety, AppendsAfterWhatIsThere) {
  std::string out = "name: ";
  append_terminal_safe(out,
                       "a\x1b"
                       "b\n",
                       true);
  EXPECT_EQ(out, j({"name: a", R, "b\n"}));
}

}  // namespace
}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Strings that come from a recording, a process table, a config file or the
// network (process, user, host, device, mark, phase and kernel names; messages
// quoting them) are chosen by someone else: a local user names a process, a
// recording comes from anywhere. Before such a string reaches a terminal (or an
// HTML page or a Prometheus label, which people also read in terminals) it passes
// here, so that it cannot retitle, clear or reprogram the terminal, nor reorder
// what is shown around it.
//
// Replaced, each by U+FFFD (the replacement character, one column wide):
//   - C0 controls U+0000..U+001F (ESC, BEL, CR, BS, ...) and DEL U+007F;
//     terminal_safe_text keeps '\n' (free text of several lines), terminal_safe
//     does not (a name on one line cannot start a forged line);
//   - C1 controls U+0080..U+009F (CSI U+009B, OSC U+009D, ...), which some
//     terminals obey even when they arrive UTF-8 encoded;
//   - bidi embeddings, overrides and isolates U+202A..U+202E, U+2066..U+2069,
//     which reorder the text after them ("Trojan Source");
//   - every byte that is not part of a valid UTF-8 sequence (a lone 0x9B byte is
//     CSI to an 8-bit terminal; overlong forms and surrogates included).
// U+FFFD rather than a "\x1b" escape: it keeps one column per replaced character,
// so tables stay aligned; it cannot be mistaken for text the name really holds
// (a "\x1b" could be typed); and applying the function twice changes nothing.
// Valid UTF-8 otherwise passes unchanged ("µs", "é", CJK, emoji).
#include <cstddef>
#include <string>
#include <string_view>

namespace gpulens {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// A name shown on one line: every control replaced, '\n' and '\t' included.
std::string terminal_safe(std::string_view text);
// Free text of several lines (a rendered report, an error message): as
// terminal_safe, but '\n' is kept.
std::string terminal_safe_text(std::string_view text);
// Appends the safe form of `text` to `out` (keep_newlines: as terminal_safe_text).
void append_terminal_safe(std::string& out, std::string_view text, bool keep_newlines);
// The length of the valid UTF-8 sequence `text` starts with (1 to 4), or 0 when
// its first byte starts none (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF). `text` must not be empty.
std::size_t utf8_sequence_length(std::string_view text);
// True when terminal_safe(_text) would return `text` unchanged.
bool is_terminal_safe(std::string_view text, bool keep_newlines);

}  // namespace gpulens

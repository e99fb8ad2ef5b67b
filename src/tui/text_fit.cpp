// SPDX-License-Identifier: Apache-2.0
#include "tui/text_fit.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>

namespace gpulens::tui {
namespace {

bool is_continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// A unit written after a number ("%", "MHz"), with any closing punctuation.
bool is_unit(std::string_view word) {
  while (!word.empty() && (word.back() == ',' || word.back() == '.' || word.back() == ')' ||
                           word.back() == ';' || word.back() == ':')) {
    word.remove_suffix(1);
  }
  static constexpr std::string_view units[] = {
      "%",  "s",   "ms", "us",  "min", "h", "W", "MHz",  "GHz",   "MiB",   "GiB",       "MB",
      "GB", "KiB", "TB", "kWh", "°C",  "C", "x", "GB/s", "MiB/s", "GPU-h", "GPU-hours", "TFLOP/s"};
  return std::find(std::begin(units), std::end(units), word) != std::end(units);
}

}  // namespace

std::size_t text_width(std::string_view s) {
  std::size_t n = 0;
  for (const char ch : s) {
    if (!is_continuation(static_cast<unsigned char>(ch))) ++n;
  }
  return n;
}

std::string fit(std::string_view s, std::size_t width, bool utf8) {
  const std::size_t w = text_width(s);
  if (w <= width) return std::string(s) + std::string(width - w, ' ');
  if (width == 0) return "";
  // Keep width-1 code points, then the ellipsis.
  std::size_t kept = 0, i = 0;
  while (i < s.size()) {
    if (!is_continuation(static_cast<unsigned char>(s[i]))) {
      if (kept == width - 1) break;
      ++kept;
    }
    ++i;
  }
  return std::string(s.substr(0, i)) + (utf8 ? "\u2026" : "~");
}

std::vector<std::string> wrap(std::string_view text, std::size_t width, std::size_t max_lines,
                              bool utf8) {
  std::vector<std::string> lines;
  if (width == 0 || max_lines == 0) return lines;
  // The words, with a number and its unit kept as one ("17 %", "1440 MHz"): a line
  // must never end in the number and the next start with the unit (issue 48).
  std::vector<std::string> words;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t space = std::min(text.find(' ', pos), text.size());
    std::string word(text.substr(pos, space - pos));
    pos = space + 1;
    if (word.empty()) continue;
    if (!words.empty() && is_unit(word) && !words.back().empty() &&
        std::isdigit(static_cast<unsigned char>(words.back().back())) != 0) {
      words.back() += " " + word;
    } else {
      words.push_back(std::move(word));
    }
  }
  std::string current;
  std::size_t line_start = 0;  // the first word of `current`
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const std::size_t need = text_width(current) + (current.empty() ? 0 : 1) + text_width(word);
    if (!current.empty() && need > width) {
      if (lines.size() + 1 == max_lines) {
        // Out of lines: the last one shows that more was cut, with whole words
        // only and room for the mark (a cut "95 %" would read "9…").
        std::string last;
        for (std::size_t j = line_start; j < words.size(); ++j) {
          const std::size_t w = text_width(last) + (last.empty() ? 0 : 1) + text_width(words[j]);
          if (w + 2 > width) break;
          last += (last.empty() ? "" : " ") + words[j];
        }
        lines.push_back(last.empty() ? fit(words[line_start] + "  ", width, utf8)
                                     : last + (utf8 ? " \u2026" : " ~"));
        return lines;
      }
      lines.push_back(text_width(current) > width ? fit(current, width, utf8) : current);
      current.clear();
      line_start = i;
    }
    if (!current.empty()) current += ' ';
    current += word;
  }
  if (!current.empty())
    lines.push_back(text_width(current) > width ? fit(current, width, utf8) : current);
  return lines;
}

std::string bar(std::optional<double> pct, std::size_t width, bool utf8) {
  const double v = std::clamp(pct.value_or(0), 0.0, 100.0);
  if (!utf8) {
    auto n = static_cast<std::size_t>(std::lround(v / 100.0 * static_cast<double>(width)));
    if (v > 0 && n == 0) n = 1;  // any activity shows
    return std::string(n, '#') + std::string(width - n, ' ');
  }
  static constexpr const char* partial[] = {"",       "\u258f", "\u258e", "\u258d",
                                            "\u258c", "\u258b", "\u258a", "\u2589"};
  auto eighths = static_cast<std::size_t>(std::lround(v / 100.0 * static_cast<double>(width * 8)));
  if (v > 0 && eighths == 0) eighths = 1;
  std::string out;
  const std::size_t full = eighths / 8;
  for (std::size_t i = 0; i < full; ++i) out += "\u2588";
  std::size_t cells = full;
  if (eighths % 8 != 0 && cells < width) {
    out += partial[eighths % 8];
    ++cells;
  }
  out += std::string(width - cells, ' ');
  return out;
}

std::string sparkline(const std::deque<std::optional<double>>& history, std::size_t width,
                      bool utf8) {
  static constexpr const char* blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                           "\u2585", "\u2586", "\u2587", "\u2588"};
  static constexpr const char ascii[] = "_.-:=+*#";
  std::string out;
  const std::size_t n = std::min(width, history.size());
  out += std::string(width - n, ' ');  // the newest value sits at the right edge
  for (std::size_t i = history.size() - n; i < history.size(); ++i) {
    const auto& v = history[i];
    if (!v) {
      out += ' ';
      continue;
    }
    const auto level = static_cast<std::size_t>(std::clamp(*v, 0.0, 100.0) / 100.0 * 7.0 + 0.5);
    if (utf8) {
      out += blocks[level];
    } else {
      out += ascii[level];
    }
  }
  return out;
}

}  // namespace gpulens::tui

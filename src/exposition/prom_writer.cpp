// SPDX-License-Identifier: Apache-2.0
#include "exposition/prom_writer.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/json_number.hpp"
#include "core/text_safety.hpp"

namespace gpulens::exposition {
namespace {

// The one Prometheus escaper: HELP text escapes backslash and newline; label
// values also escape quotes. First, controls other than newline, bidi overrides
// and broken UTF-8 are replaced (core/text_safety): Prometheus refuses a whole
// scrape over one label that is not UTF-8 (a process named with byte 0xFF would
// blind the node's monitoring), and people read /metrics with curl in a terminal.
void append_escaped(std::string& out, std::string_view raw, bool quotes) {
  std::string replaced;
  if (!is_terminal_safe(raw, true)) replaced = terminal_safe_text(raw);
  const std::string_view text = replaced.empty() ? raw : std::string_view(replaced);
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '"':
        out += quotes ? "\\\"" : "\"";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace

void append_label(std::string& labels, std::string_view name, std::string_view value) {
  if (!labels.empty()) labels += ',';
  labels += name;
  labels += "=\"";
  append_escaped(labels, value, true);
  labels += '"';
}

std::string render_labels(std::initializer_list<Label> labels) {
  std::string out;
  for (const auto& [name, value] : labels) append_label(out, name, value);
  return out;
}

void append_prom_number(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else if (value == std::floor(value) && std::fabs(value) < 1e15) {
    append_shortest(out, value);  // integers as integers: bytes, counts, timestamps
  } else {
    // 15 significant digits: every digit a double holds for sure, without the
    // 16th-17th digit noise that arithmetic leaves (16.806 / 100 is
    // 0.16806000000000001 in shortest round-trip form, 0.16806 here).
    fmt::format_to(std::back_inserter(out), "{:.15g}", value);
  }
}

double scaled(double value, double factor) {
  if (factor > 0 && factor < 1) return value / std::round(1 / factor);
  return value * factor;
}

void PromWriter::family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  append_escaped(out_, help, false);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void PromWriter::sample(std::string_view name, std::string_view labels, double value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    out_ += labels;
    out_ += '}';
  }
  out_ += ' ';
  append_prom_number(out_, value);
  out_ += '\n';
}

void PromWriter::sample(std::string_view name, std::string_view labels, std::string_view extra_name,
                        std::string_view extra_value, double value) {
  std::string all(labels);
  append_label(all, extra_name, extra_value);
  sample(name, all, value);
}

}  // namespace gpulens::exposition

// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/kernel_label.hpp"

#include "core/text_safety.hpp"
#include "kernels/record/kernel_names.hpp"
#include "kernels/record/summary_datagram.hpp"

namespace gpulens::kernels {
namespace {

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Runs of whitespace as one space, none at either end.
std::string collapse_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending = false;
  for (char c : s) {
    if (blank(c)) {
      pending = !out.empty();
      continue;
    }
    if (pending) out += ' ';
    pending = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string kernel_label(std::string_view demangled, std::size_t max_bytes) {
  // Bounded before any work: a summary's names are at most kMaxSummaryNameBytes,
  // but this is also called on names from elsewhere.
  const std::string bounded = cut_name(demangled, kMaxSummaryNameBytes);
  // Short name first (it may cut inside a character), one line, then made valid
  // UTF-8 and free of controls and bidi overrides, then cut on a character boundary.
  std::string label = terminal_safe(collapse_spaces(short_kernel_name(bounded)));
  label = collapse_spaces(cut_name(label, max_bytes));
  if (label.empty()) return "(unnamed)";
  if (label == kOtherKernelLabel) label += '_';
  return label;
}

}  // namespace gpulens::kernels

// SPDX-License-Identifier: Apache-2.0
#include "cli/record_progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/text_units.hpp"

namespace gpulens::cli {
namespace {

// 12345 as "12,345": a count read at a glance while it grows.
std::string grouped(std::size_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string size_text(std::uintmax_t bytes) {
  const double kib = static_cast<double>(bytes) / 1024.0;
  if (kib < 1024) return fmt::format("{:.0f} KiB", kib);
  if (kib < 1024 * 1024) return fmt::format("{:.1f} MiB", kib / 1024);
  return fmt::format("{:.2f} GiB", kib / 1024 / 1024);
}

void write_all(const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;  // a progress line is not worth an error
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string record_progress_line(std::size_t samples, std::size_t gpus, std::uintmax_t bytes,
                                 double elapsed_s) {
  return fmt::format("recording: {} sample{}, {} GPU{}, {}, {}", grouped(samples),
                     samples == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s", size_text(bytes),
                     duration_text(elapsed_s));
}

void show_progress_line(const std::string& line) {
  write_all("\r" + line + "\033[K");
}

void clear_progress_line() {
  write_all("\r\033[K");
}

}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
#include "render/format.hpp"

#include <fmt/format.h>

#include <cmath>

#include "verdict/gpu_models.hpp"

namespace gpulens::render {

std::string group_thousands(long long value) {
  const bool negative = value < 0;
  std::string digits = std::to_string(negative ? -value : value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

std::string format_money(double amount, const std::string& currency) {
  const std::string sym = verdict::currency_symbol(currency);
  const double a = std::abs(amount);
  std::string number;
  if (a >= 100) {
    number = group_thousands(std::llround(a));
  } else if (a >= 1 || a == 0) {
    number = fmt::format("{:.2f}", a);
  } else {
    number = fmt::format("{:.3g}", a);
  }
  return (amount < 0 ? "-" : "") + sym + number;
}

std::string format_gpu_hours(double hours) {
  if (hours >= 10) return fmt::format("{:.1f}", hours);
  if (hours >= 0.1) return fmt::format("{:.2f}", hours);
  return fmt::format("{:.3g}", hours);
}

}  // namespace gpulens::render

// SPDX-License-Identifier: Apache-2.0
#include "core/json_number.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

namespace gpulens {

double round_to(double x, int places) {
  const double k = std::pow(10.0, places);
  return std::round(x * k) / k;
}

nlohmann::ordered_json json_number(double x, int places) {
  if (!std::isfinite(x)) return nullptr;
  return round_to(x, places);
}

nlohmann::ordered_json json_number(const std::optional<double>& x, int places) {
  return x ? json_number(*x, places) : nlohmann::ordered_json(nullptr);
}

void append_shortest(std::string& out, double finite_value) {
  if (finite_value == std::floor(finite_value) && std::fabs(finite_value) < 1e15) {
    fmt::format_to(std::back_inserter(out), "{}", static_cast<long long>(finite_value));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", finite_value);  // shortest round-trip form
  }
}

}  // namespace gpulens

// SPDX-License-Identifier: Apache-2.0
#include "exposition/api_params.hpp"

#include <charconv>
#include <cmath>

namespace gpulens::exposition {
namespace {

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto end = comma == std::string_view::npos ? text.size() : comma;
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

}  // namespace

std::optional<std::vector<int>> parse_gpu_list(std::string_view text) {
  std::vector<int> out;
  for (auto part : split(text)) {
    int v = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v < 0 || v > 1023)
      return std::nullopt;
    out.push_back(v);
  }
  return out;
}

std::optional<std::vector<Metric>> parse_metric_list(std::string_view text, std::string& bad) {
  std::vector<Metric> out;
  for (auto part : split(text)) {
    const auto m = metric_from_key(part);
    if (!m) {
      bad = std::string(part.substr(0, 64));
      return std::nullopt;
    }
    out.push_back(*m);
  }
  return out;
}

}  // namespace gpulens::exposition

#include "exposition/api_params.hpp"

#include <charconv>
#include <cmath>

namespace gpulens::server {
namespace {

std::optional<double> parse_number(std::string_view text, std::string_view& rest) {
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text.front())) != 0 || text.front() == '.'))
    return std::nullopt;
  double value = 0;
  const auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (ec != std::errc() || !std::isfinite(value)) return std::nullopt;
  rest = text.substr(static_cast<std::size_t>(ptr - text.data()));
  return value;
}

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

std::optional<double> parse_duration_param(std::string_view text) {
  std::string_view unit;
  const auto value = parse_number(text, unit);
  if (!value) return std::nullopt;
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1;
  else if (unit == "ms")
    scale = 0.001;
  else if (unit == "m")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  else if (unit == "d")
    scale = 86400;
  else if (unit == "w")
    scale = 7 * 86400;
  else
    return std::nullopt;
  // Beyond ~317 years a duration is a mistake, and step=1e23 overflowed the
  // millisecond arithmetic of the history query to a negative step.
  if (*value * scale > kMaxParamSeconds) return std::nullopt;
  return *value * scale;
}

std::optional<double> parse_time_param(std::string_view text, double now) {
  if (text == "now") return now;
  if (text.starts_with("now-")) text.remove_prefix(3);
  if (text.starts_with('-')) {
    const auto d = parse_duration_param(text.substr(1));
    if (!d) return std::nullopt;
    return now - *d;
  }
  std::string_view rest;
  const auto t = parse_number(text, rest);
  if (!t || !rest.empty() || *t > kMaxParamSeconds) return std::nullopt;
  return *t;
}

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

}  // namespace gpulens::server

// SPDX-License-Identifier: Apache-2.0
#include "exposition/metrics_encoding.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <vector>

namespace gpulens::exposition {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lowered(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Each element of a comma-separated header: its value and its q (1 when absent).
std::vector<std::pair<std::string, double>> weighted_list(std::string_view header) {
  std::vector<std::pair<std::string, double>> out;
  while (!header.empty()) {
    const auto comma = std::min(header.find(','), header.size());
    std::string_view element = header.substr(0, comma);
    header.remove_prefix(std::min(comma + 1, header.size()));
    const auto semi = std::min(element.find(';'), element.size());
    const std::string value = lowered(trimmed(element.substr(0, semi)));
    double q = 1;
    std::string_view params = element.substr(semi);
    while (!params.empty()) {
      params.remove_prefix(1);  // the ';'
      const auto next = std::min(params.find(';'), params.size());
      const std::string param = lowered(trimmed(params.substr(0, next)));
      if (param.rfind("q=", 0) == 0) q = std::strtod(param.c_str() + 2, nullptr);
      params.remove_prefix(next);
    }
    if (!value.empty()) out.emplace_back(value, q);
  }
  return out;
}

// "# HELP name text" or "# TYPE name type": the name and the rest.
bool metadata(std::string_view line, std::string_view kind, std::string_view& name,
              std::string_view& rest) {
  const std::string prefix = "# " + std::string(kind) + " ";
  if (line.substr(0, prefix.size()) != prefix) return false;
  line.remove_prefix(prefix.size());
  const auto space = std::min(line.find(' '), line.size());
  name = line.substr(0, space);
  rest = line.substr(std::min(space + 1, line.size()));
  return true;
}

bool ends_with(std::string_view s, std::string_view end) {
  return s.size() >= end.size() && s.substr(s.size() - end.size()) == end;
}

}  // namespace

MetricsEncoding negotiate_metrics(std::string_view accept, std::string_view accept_encoding) {
  MetricsEncoding e;
  double openmetrics_q = 0;
  double text_q = 0;
  for (const auto& [type, q] : weighted_list(accept)) {
    if (type == "application/openmetrics-text") openmetrics_q = std::max(openmetrics_q, q);
    if (type == "text/plain" || type == "text/*" || type == "*/*") text_q = std::max(text_q, q);
  }
  e.openmetrics = openmetrics_q > 0 && openmetrics_q >= text_q;
  for (const auto& [coding, q] : weighted_list(accept_encoding)) {
    if ((coding == "gzip" || coding == "x-gzip") && q > 0) e.gzip = true;
  }
  return e;
}

std::string to_openmetrics(std::string_view text) {
  // Which counter families have samples without the `_total` suffix.
  std::map<std::string, bool, std::less<>> counters;  // name -> named with _total
  for (std::size_t pos = 0; pos < text.size();) {
    const auto end = std::min(text.find('\n', pos), text.size());
    std::string_view name, rest;
    if (metadata(text.substr(pos, end - pos), "TYPE", name, rest) && rest == "counter") {
      counters[std::string(name)] = ends_with(name, "_total");
    }
    pos = end + 1;
  }
  // The family's name in OpenMetrics, and its type.
  const auto family = [&](std::string_view name) -> std::string_view {
    const auto c = counters.find(name);
    if (c != counters.end() && c->second) name.remove_suffix(6);  // "_total"
    return name;
  };
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t pos = 0; pos < text.size();) {
    const auto end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    std::string_view name, rest;
    if (line.empty()) continue;
    if (metadata(line, "TYPE", name, rest)) {
      std::string_view type = rest;
      const auto c = counters.find(name);
      if (type == "untyped" || (c != counters.end() && !c->second)) type = "unknown";
      out += "# TYPE ";
      out += family(name);
      out += ' ';
      out += type;
      out += '\n';
    } else if (metadata(line, "HELP", name, rest)) {
      out += "# HELP ";
      out += family(name);
      out += ' ';
      // Prometheus text escapes '\' and newline in HELP; OpenMetrics also '"'.
      for (const char ch : rest) {
        if (ch == '"') out += '\\';
        out += ch;
      }
      out += '\n';
    } else if (line[0] == '#') {
      continue;  // OpenMetrics allows no other comment
    } else {
      out += line;
      out += '\n';
    }
  }
  out += "# EOF\n";
  return out;
}

Result<std::string> gzip_compress(std::string_view data) {
  z_stream z{};
  // 15 + 16: a gzip wrapper around the deflate stream; level 1, since a scrape
  // every few seconds is better served fast than smallest.
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error{"zlib: deflateInit2 failed"};
  }
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Error{"zlib: deflate did not finish"};
  return out;
}

}  // namespace gpulens::exposition

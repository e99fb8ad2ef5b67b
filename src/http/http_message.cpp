// SPDX-License-Identifier: Apache-2.0
#include "http/http_message.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/status.hpp>
#include <cctype>
#include <limits>

namespace gpulens::http {
namespace {

namespace beast_http = boost::beast::http;

bool same_name(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

template <typename Fields>
const std::string* find_field(const Fields& fields, std::string_view name) {
  for (const auto& [n, v] : fields) {
    if (same_name(n, name)) return &v;
  }
  return nullptr;
}

}  // namespace

bool Request::has_header(std::string_view name) const {
  return find_field(headers, name) != nullptr;
}

std::string Request::header(std::string_view name) const {
  const auto* v = find_field(headers, name);
  return v ? *v : std::string();
}

std::size_t Request::header_count(std::string_view name) const {
  return static_cast<std::size_t>(std::count_if(
      headers.begin(), headers.end(), [name](const auto& f) { return same_name(f.first, name); }));
}

std::string Request::param(const std::string& key) const {
  const auto it = params.find(key);
  return it == params.end() ? std::string() : it->second;
}

void Response::set_header(std::string_view name, std::string value) {
  std::erase_if(headers, [name](const auto& f) { return same_name(f.first, name); });
  headers.emplace_back(std::string(name), std::move(value));
}

bool Response::has_header(std::string_view name) const {
  return find_field(headers, name) != nullptr;
}

std::string Response::header(std::string_view name) const {
  const auto* v = find_field(headers, name);
  return v ? *v : std::string();
}

namespace {

// A header line that starts with a space or a tab continues the one before it
// (obs-fold, RFC 9112 5.2): a server must refuse it or unfold it, and a proxy in
// front may have done the other; refused, like every form two readers could
// take differently.
bool has_folded_line(std::string_view head) {
  for (auto nl = head.find('\n'); nl != std::string_view::npos && nl + 1 < head.size();
       nl = head.find('\n', nl + 1)) {
    if (head[nl + 1] == ' ' || head[nl + 1] == '\t') return true;
  }
  return false;
}

}  // namespace

std::optional<Request> parse_request_head(std::string_view head) {
  if (has_folded_line(head)) return std::nullopt;
  beast_http::request_parser<beast_http::empty_body> parser;
  // The connection loop has measured the head already (its lines and its whole
  // size); Beast's own limits would only answer differently.
  parser.header_limit(std::numeric_limits<std::uint32_t>::max());
  // A declared body's size is judged by the server (413), not by the parser.
  // The largest limit, not boost::none: Beast 1.74 compares the length with the
  // optional itself, and any length is larger than none.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  parser.eager(false);  // stop after the head: a body is never parsed
  boost::beast::error_code ec;
  std::size_t used = 0;
  while (!parser.is_header_done() && used < head.size()) {
    const std::size_t n =
        parser.put(boost::asio::const_buffer(head.data() + used, head.size() - used), ec);
    if (ec || n == 0) return std::nullopt;
    used += n;
  }
  if (!parser.is_header_done()) return std::nullopt;
  const auto& msg = parser.get();
  Request req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  req.version = static_cast<int>(msg.version());
  req.keep_alive = msg.keep_alive();
  req.has_body = parser.chunked() || parser.content_length().value_or(0) > 0;
  for (const auto& field : msg)
    req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  // Two Host fields name two targets (RFC 9112 3.2: answered 400).
  if (req.header_count("Host") > 1) return std::nullopt;
  const std::string_view target = req.target;
  const auto query = target.find('?');
  req.path = percent_decode(target.substr(0, query), false);
  if (query != std::string_view::npos) req.params = parse_query(target.substr(query + 1));
  return req;
}

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += (plus_is_space && c == '+') ? ' ' : c;
  }
  return out;
}

std::multimap<std::string, std::string> parse_query(std::string_view query) {
  std::multimap<std::string, std::string> params;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    const std::string_view key = pair.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    params.emplace(percent_decode(key, true), percent_decode(value, true));
  }
  return params;
}

std::string_view status_reason(int status) {
  const auto code = status < 100 || status > 999
                        ? beast_http::status::unknown
                        : beast_http::int_to_status(static_cast<unsigned>(status));
  if (code == beast_http::status::unknown) return "Unknown";
  const auto reason = beast_http::obsolete_reason(code);
  return {reason.data(), reason.size()};
}

std::string response_head(const Response& res, bool close, std::string_view keep_alive_terms) {
  std::string head = fmt::format("HTTP/1.1 {} {}\r\n", res.status, status_reason(res.status));
  for (const auto& [name, value] : res.headers) {
    if (same_name(name, "Connection") || same_name(name, "Content-Length") ||
        same_name(name, "Keep-Alive"))
      continue;
    head += fmt::format("{}: {}\r\n", name, value);
  }
  if (!res.content_type.empty()) head += fmt::format("Content-Type: {}\r\n", res.content_type);
  head += fmt::format("Content-Length: {}\r\n", res.body.size());
  if (close) {
    head += "Connection: close\r\n";
  } else if (!keep_alive_terms.empty()) {
    head += fmt::format("Connection: Keep-Alive\r\nKeep-Alive: {}\r\n", keep_alive_terms);
  }
  head += "\r\n";
  return head;
}

}  // namespace gpulens::http

// SPDX-License-Identifier: Apache-2.0
#pragma once
// One HTTP/1.x request as the agent sees it, and the answer it gives.
//
// The request head is parsed by Boost.Beast's http::request_parser (header-only,
// Debian's libboost-dev), run on the bytes the connection loop has already read
// and measured (http_connection.hpp): no Asio sockets, no Beast streams. Beast
// was chosen over nodejs' http_parser (libhttp-parser-dev has a static archive)
// because http_parser's upstream is archived and unmaintained, while Beast is
// kept and ships in the Boost that every supported distribution packages; being
// header-only it links into the binary with nothing to load at run time. What
// Beast does not do for a server this small (the path's percent-decoding, the
// query string, routing, writing the answer) is the little code below and in
// exposition/http_server.cpp.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpulens::http {

using HeaderFields = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;  // as sent: "GET", "HEAD", "POST", ...
  std::string target;  // the request-target as sent: "/api/v1/history?from=-1h"
  std::string path;    // target before '?', percent-decoded
  std::multimap<std::string, std::string> params;  // the query, decoded ('+' is a space)
  HeaderFields headers;                            // in the order sent
  int version = 11;                                // 10: HTTP/1.0, 11: HTTP/1.1
  bool keep_alive = true;  // what the client asked for (HTTP/1.0 needs "keep-alive")
  // A body follows the head (Content-Length > 0, or chunked). None is ever read:
  // the connection closes after the answer so that it is never taken for a request.
  bool has_body = false;

  // Header names compare without case (RFC 9110 5.1).
  bool has_header(std::string_view name) const;
  std::string header(std::string_view name) const;  // the first; "" when absent
  std::size_t header_count(std::string_view name) const;
  bool has_param(const std::string& key) const { return params.count(key) > 0; }
  std::string param(const std::string& key) const;  // the first; "" when absent
};

struct Response {
  int status = 200;
  HeaderFields headers;  // besides Content-Type, Content-Length and Connection
  std::string content_type;
  std::string body;

  // Replaces a field of the same name.
  void set_header(std::string_view name, std::string value);
  bool has_header(std::string_view name) const;
  std::string header(std::string_view name) const;
  void set_content(std::string text, std::string type) {
    body = std::move(text);
    content_type = std::move(type);
  }
};

// A request head (request line, fields, the blank line) as Beast parses it;
// nullopt when it is not one (the caller answers 400).
std::optional<Request> parse_request_head(std::string_view head);

// Percent-decoding of a path or a query component; '+' is a space in a query.
// A malformed escape is kept as it is (as browsers and cpp-httplib did).
std::string percent_decode(std::string_view text, bool plus_is_space);

// "a=1&b=x%20y&c" as key/value pairs.
std::multimap<std::string, std::string> parse_query(std::string_view query);

// "OK", "Not Found", ...; "Unknown" for a code without a name.
std::string_view status_reason(int status);

// The status line and header fields of `res` (blank line included), with
// Content-Length of its body; `close` adds "Connection: close", otherwise the
// keep-alive terms are stated.
std::string response_head(const Response& res, bool close, std::string_view keep_alive_terms);

}  // namespace gpulens::http

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The agent's connection loop: reads each request's head, measures it, has it
// parsed (http_message.hpp), hands the request to the server's handler and
// writes the answer. Each request must arrive and be answered within a total
// deadline, so a client that sends one header byte every few seconds cannot
// hold a worker thread for as long as it likes; a head that is too large gets
// a 414 or 431, never a silent close.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "http/http_message.hpp"
#include "http/http_transport.hpp"

namespace gpulens::http {

struct ConnectionLimits {
  // From a request's first byte (for the first request: from the connection's
  // start, TLS handshake included) to the last byte of its answer.
  std::chrono::milliseconds request_timeout{15000};
  std::chrono::milliseconds read_timeout{5000};        // each wait for the client's bytes
  std::chrono::milliseconds write_timeout{10000};      // each wait for the client to take bytes
  std::chrono::milliseconds keep_alive_timeout{5000};  // idle between requests
  // The whole TLS handshake, from the connection's start, however its bytes come.
  std::chrono::milliseconds handshake_timeout{5000};
  std::size_t keep_alive_max = 100;        // requests per connection
  std::size_t max_head_bytes = 32 * 1024;  // request line and header fields together
  // "Name: value\r\n" lines for the answers this layer writes itself (408, 414, 431).
  std::string refusal_headers;
  std::function<void(int status)> on_refused;  // counts those answers
};

enum class HeadVerdict { Ok, UriTooLong, FieldsTooLarge };

// The request line, and each header line, with its line end: the bounds the
// agent has always had (they were cpp-httplib's, which it used to be built on).
inline constexpr std::size_t kMaxRequestLine = 8192;
inline constexpr std::size_t kMaxHeaderLine = 8192;

// Whether `buffered` holds all a worker needs to answer: a head's end (the
// blank line), or a line ended by a bare LF, which no valid head has (answered
// 400 at once, rather than 408 once the wait for a CRLF that never comes ends).
bool head_ends(std::string_view buffered);

// `head` is a request's head, blank line included: whether its request line and
// each header line keep within kMaxRequestLine and kMaxHeaderLine.
HeadVerdict check_head(std::string_view head);

// The server's answer to one parsed request. It may throw: the connection layer
// never sees it, the handler catches what it wants to report.
using ProcessRequest = std::function<void(const Request& request, Response& response)>;

// Serves requests on one connection until it ends: the client closes or goes
// idle, a request breaks a limit, an answer says "Connection: close", or the
// server stops (`listening` becomes -1). The first request's deadline is
// `first_deadline`. Returns whether to linger at the close: a request was
// refused for its size or form, and the client may still be sending it.
bool serve_connection(Transport& transport, const ConnectionLimits& limits,
                      Clock::time_point first_deadline, const std::atomic<int>& listening,
                      const ProcessRequest& process);

// What a connection carries between requests when the gate (connection_gate.hpp)
// waits for its next request instead of a worker thread.
struct ConnectionState {
  std::string buffered;    // bytes read and not yet consumed
  std::size_t served = 0;  // requests answered on it
};

enum class AfterRequest { KeepAlive, Close, CloseLinger };

// One request on a connection whose head is in `state.buffered` (or will not
// come: a time-out answers 408, a close 400): parses, answers, and says whether
// the connection stays open for another one.
AfterRequest serve_one_request(Transport& transport, const ConnectionLimits& limits,
                               Clock::time_point deadline, ConnectionState& state,
                               const ProcessRequest& process);

// Closes the connection. Closing with the client's bytes unread makes the kernel
// answer with a reset, which can discard the answer before the client reads it:
// so what has arrived is read first, and when lingering the connection is
// half-closed and what still comes is read too, for at most a second and a
// megabyte. A client that is merely slow (408) gets no lingering.
void finish_connection(Transport& transport, bool linger);

}  // namespace gpulens::http

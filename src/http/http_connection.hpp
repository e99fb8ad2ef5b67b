#pragma once
// The agent's own connection loop around cpp-httplib's request parser. 0.11
// bounds each read and write but not a request as a whole, so a client that
// sends one header byte every few seconds holds a worker thread for as long as
// it likes, and it answers an over-long head by closing the connection. Here
// each request must arrive and be answered within a total deadline, its head
// (request line and header fields) is read and measured before cpp-httplib
// parses it, and a head that is too large gets a 414 or 431.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "http/http.hpp"
#include "http/http_transport.hpp"

namespace gpulens::server {

struct ConnectionLimits {
  // From a request's first byte (for the first request: from the connection's
  // start, TLS handshake included) to the last byte of its answer.
  std::chrono::milliseconds request_timeout{15000};
  std::chrono::milliseconds read_timeout{5000};        // each wait for the client's bytes
  std::chrono::milliseconds write_timeout{10000};      // each wait for the client to take bytes
  std::chrono::milliseconds keep_alive_timeout{5000};  // idle between requests
  std::size_t keep_alive_max = 100;                    // requests per connection
  std::size_t max_head_bytes = 32 * 1024;              // request line and header fields together
  // "Name: value\r\n" lines for the answers this layer writes itself (408, 414, 431).
  std::string refusal_headers;
  std::function<void(int status)> on_refused;  // counts those answers
};

enum class HeadVerdict { Ok, UriTooLong, FieldsTooLarge };

// `head` is a request's head, blank line included. The request line and each
// header line (with its line end) may have as many bytes as cpp-httplib takes
// (CPPHTTPLIB_REQUEST_URI_MAX_LENGTH, CPPHTTPLIB_HEADER_MAX_LENGTH): beyond, it
// would answer a bare 400, where 414 and 431 say what is wrong.
HeadVerdict check_head(std::string_view head);

// cpp-httplib's Server::process_request for one request on `stream`.
using ProcessRequest =
    std::function<bool(httplib::Stream& stream, bool close_connection, bool& connection_closed)>;

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

}  // namespace gpulens::server

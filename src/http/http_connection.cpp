// SPDX-License-Identifier: Apache-2.0
#include "http/http_connection.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpulens::http {
namespace {

constexpr std::size_t kChunk = 4096;
constexpr std::string_view kHeadEnd = "\r\n\r\n";

// A line's length up to and with its '\n'.
std::size_t first_line_size(std::string_view text) {
  const auto nl = text.find('\n');
  return nl == std::string_view::npos ? text.size() : nl + 1;
}

// A line feed without the carriage return before it.
bool has_bare_lf(std::string_view text) {
  for (auto nl = text.find('\n'); nl != std::string_view::npos; nl = text.find('\n', nl + 1)) {
    if (nl == 0 || text[nl - 1] != '\r') return true;
  }
  return false;
}

// One connection's bytes: a buffer that holds each request's head (and what
// follows it, a pipelined request) and every wait bounded by the current
// request's deadline.
class ConnectionStream {
 public:
  enum class Head { Complete, Truncated, None, TimedOut, TooLarge };

  ConnectionStream(Transport& transport, const ConnectionLimits& limits, std::string buffered = {})
      : t_(transport), limits_(limits), buf_(std::move(buffered)) {}

  // Bytes read but not consumed (a pipelined next request): handed back to the gate.
  std::string take_unread() {
    std::string rest = buf_.substr(pos_);
    buf_.clear();
    pos_ = 0;
    return rest;
  }

  void begin(Clock::time_point deadline) { deadline_ = deadline; }

  // Reads until the blank line that ends the head is in the buffer; on
  // Complete, head() is the head and the buffer goes on after it.
  Head read_head(HeadVerdict& verdict) {
    buf_.erase(0, pos_);
    pos_ = 0;
    std::size_t scan_from = 0;
    char chunk[kChunk];
    while (true) {
      const auto end = buf_.find(kHeadEnd, scan_from);
      // A bare LF before the head's end: not HTTP as RFC 9112 writes it, and
      // what a proxy in front might read differently.
      const std::string_view upto(buf_.data(), end == std::string::npos ? buf_.size() : end);
      if (has_bare_lf(upto)) return Head::Truncated;
      if (end != std::string::npos) {
        const std::string_view head(buf_.data(), end + kHeadEnd.size());
        verdict = head.size() > limits_.max_head_bytes ? too_large() : check_head(head);
        if (verdict != HeadVerdict::Ok) return Head::TooLarge;
        head_ = std::string(head);
        pos_ = head.size();
        return Head::Complete;
      }
      if (buf_.size() >= limits_.max_head_bytes) {
        verdict = too_large();
        return Head::TooLarge;
      }
      scan_from = buf_.size() < kHeadEnd.size() ? 0 : buf_.size() - (kHeadEnd.size() - 1);
      const ssize_t n = t_.read_some(chunk, sizeof chunk, until(limits_.read_timeout));
      if (n > 0) {
        buf_.append(chunk, static_cast<std::size_t>(n));
        continue;
      }
      // A client that stops in the middle of a head hears why; one that sent
      // nothing (an idle connection) is just closed.
      if (buf_.empty()) return Head::None;
      if (n == kPeerClosed) return Head::Truncated;
      return n == kTimedOut ? Head::TimedOut : Head::None;
    }
  }

  const std::string& head() const { return head_; }

  // Waits for the next request's first byte, at most `idle`, while serving.
  bool wait_next_request(std::chrono::milliseconds idle, const std::atomic<int>& listening) {
    if (pos_ < buf_.size() || t_.has_pending()) return true;
    const auto end = Clock::now() + idle;
    while (listening.load() != -1) {
      // Short steps, so that stopping the server does not wait for idle clients.
      const int r = wait_fd(t_.fd(), POLLIN, std::min(end, Clock::now() + kStopCheck));
      if (r != 0) return r > 0;
      if (Clock::now() >= end) return false;
    }
    return false;
  }

  // An answer of this layer's own, for a request that never reached the server's
  // handler: too slow, too large, or not HTTP.
  void refuse(int status, std::string_view body) {
    const std::string text = fmt::format(
        "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n"
        "Connection: close\r\n{}\r\n{}",
        status, status_reason(status), body.size(), limits_.refusal_headers, body);
    // Its own short budget: the request's deadline may be what has passed.
    write_all(text, Clock::now() + std::min(limits_.write_timeout, kRefusalBudget));
    if (limits_.on_refused) limits_.on_refused(status);
  }

  // Writes all of `text` before `end` (each wait at most the write time-out).
  bool write_all(std::string_view text, Clock::time_point end) {
    for (std::size_t done = 0; done < text.size();) {
      if (Clock::now() >= end) return false;
      const auto step = std::min(end, Clock::now() + limits_.write_timeout);
      const ssize_t n = t_.write_some(text.data() + done, text.size() - done, step);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  Clock::time_point deadline() const { return deadline_; }

 private:
  static constexpr std::chrono::milliseconds kStopCheck{50};
  static constexpr std::chrono::milliseconds kRefusalBudget{1000};

  Clock::time_point until(std::chrono::milliseconds step) const {
    return std::min(deadline_, Clock::now() + step);
  }

  HeadVerdict too_large() const {
    return first_line_size(buf_) > kMaxRequestLine ? HeadVerdict::UriTooLong
                                                   : HeadVerdict::FieldsTooLarge;
  }

  Transport& t_;
  const ConnectionLimits& limits_;
  std::string buf_;
  std::size_t pos_ = 0;
  std::string head_;
  Clock::time_point deadline_{};
};

bool says_close(const Response& res) {
  std::string value = res.header("Connection");
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return value.find("close") != std::string::npos;
}

// One request whose head read_head has been asked for: refused, or parsed,
// handled and answered. `last`: the connection's last request in any case.
AfterRequest handle_request(ConnectionStream& stream, const ConnectionLimits& limits, bool last,
                            std::size_t served_before, const ProcessRequest& process) {
  HeadVerdict verdict = HeadVerdict::Ok;
  const auto head = stream.read_head(verdict);
  if (head == ConnectionStream::Head::None) return AfterRequest::Close;
  if (head == ConnectionStream::Head::TimedOut) {
    stream.refuse(408, "the request did not arrive in time\n");
    return AfterRequest::Close;
  }
  if (head == ConnectionStream::Head::TooLarge) {
    if (verdict == HeadVerdict::UriTooLong)
      stream.refuse(414, "request line too long\n");
    else
      stream.refuse(431, "request header fields too large\n");
    return AfterRequest::CloseLinger;  // the rest of the head may still be on its way
  }
  // A head cut off by the client's close, or one that is not HTTP: what it
  // carried may still be on its way.
  const auto request = head == ConnectionStream::Head::Complete ? parse_request_head(stream.head())
                                                                : std::optional<Request>();
  if (!request) {
    stream.refuse(400, "bad request\n");
    return AfterRequest::CloseLinger;
  }
  Response response;
  bool failed = false;
  try {
    process(*request, response);
  } catch (...) {
    // The handler reports its own failures; what escapes it (out of memory)
    // must not end a worker thread, and so the process.
    response = Response{};
    response.status = 500;
    response.set_content("internal error\n", "text/plain; charset=utf-8");
    failed = true;
  }
  // A body is never read, so nothing after it on the connection can be trusted
  // to start a request.
  const bool close =
      failed || last || !request->keep_alive || request->has_body || says_close(response);
  const auto keep_alive_terms =
      fmt::format("timeout={}, max={}",
                  std::chrono::ceil<std::chrono::seconds>(limits.keep_alive_timeout).count(),
                  limits.keep_alive_max - std::min(limits.keep_alive_max, served_before + 1));
  std::string text = response_head(response, close, keep_alive_terms);
  // HEAD: the same head as GET, Content-Length included, and no body.
  if (request->method != "HEAD") text += response.body;
  if (!stream.write_all(text, stream.deadline())) return AfterRequest::Close;
  if (close && response.status >= 400) return AfterRequest::CloseLinger;
  return close ? AfterRequest::Close : AfterRequest::KeepAlive;
}

}  // namespace

bool head_ends(std::string_view buffered) {
  return buffered.find(kHeadEnd) != std::string_view::npos || has_bare_lf(buffered);
}

HeadVerdict check_head(std::string_view head) {
  if (first_line_size(head) > kMaxRequestLine) return HeadVerdict::UriTooLong;
  head.remove_prefix(first_line_size(head));
  while (!head.empty()) {
    const auto line = first_line_size(head);
    if (line > kMaxHeaderLine) return HeadVerdict::FieldsTooLarge;
    head.remove_prefix(line);
  }
  return HeadVerdict::Ok;
}

AfterRequest serve_one_request(Transport& transport, const ConnectionLimits& limits,
                               Clock::time_point deadline, ConnectionState& state,
                               const ProcessRequest& process) {
  ConnectionStream stream(transport, limits, std::move(state.buffered));
  stream.begin(deadline);
  const bool last = state.served + 1 >= limits.keep_alive_max;
  const auto after = handle_request(stream, limits, last, state.served, process);
  ++state.served;
  if (after == AfterRequest::KeepAlive) state.buffered = stream.take_unread();
  return after;
}

bool serve_connection(Transport& transport, const ConnectionLimits& limits,
                      Clock::time_point first_deadline, const std::atomic<int>& listening,
                      const ProcessRequest& process) {
  ConnectionStream stream(transport, limits);
  auto deadline = first_deadline;
  for (std::size_t served = 0; served < limits.keep_alive_max && listening.load() != -1; ++served) {
    if (served > 0) {
      if (!stream.wait_next_request(limits.keep_alive_timeout, listening)) break;
      deadline = Clock::now() + limits.request_timeout;  // per request, not per connection
    }
    stream.begin(deadline);
    const bool last = served + 1 == limits.keep_alive_max;
    const auto after = handle_request(stream, limits, last, served, process);
    if (after == AfterRequest::CloseLinger) return true;
    if (after == AfterRequest::Close) break;
  }
  return false;
}

void finish_connection(Transport& transport, bool linger) {
  const int fd = transport.fd();
  transport.say_goodbye();
  if (linger) ::shutdown(fd, SHUT_WR);
  // Bytes left in the socket's receive buffer would turn the close into a reset:
  // read them (and, lingering, what still comes) first.
  const auto end = Clock::now() + (linger ? std::chrono::seconds(1) : std::chrono::seconds(0));
  std::size_t drained = 0;
  char scratch[kChunk];
  while (drained < (1u << 20)) {
    const ssize_t n = ::recv(fd, scratch, sizeof scratch, 0);
    if (n > 0) {
      drained += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
    if (wait_fd(fd, POLLIN, end) <= 0) break;
  }
  ::close(fd);
}

}  // namespace gpulens::http

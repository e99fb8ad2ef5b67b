#include "http/http_connection.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gpulens::server {
namespace {

constexpr std::size_t kChunk = 4096;
constexpr std::string_view kHeadEnd = "\r\n\r\n";

// Line lengths as cpp-httplib's line reader counts them: up to and with the '\n'.
std::size_t first_line_size(std::string_view text) {
  const auto nl = text.find('\n');
  return nl == std::string_view::npos ? text.size() : nl + 1;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len)) != 0) return;
  char host[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (::getnameinfo(sa, len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host;
  port = std::atoi(serv);
}

// httplib::Stream over a Transport for one connection: reads come from a buffer
// that holds each request's head before cpp-httplib parses it, and every wait
// ends at the current request's deadline.
class ConnectionStream final : public httplib::Stream {
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

  void begin(Clock::time_point deadline) {
    deadline_ = deadline;
    status_ = 0;
    says_close_ = false;
    answered_ = false;
  }

  // Reads until the blank line that ends the head is in the buffer.
  Head read_head(HeadVerdict& verdict) {
    buf_.erase(0, pos_);
    pos_ = 0;
    std::size_t scan_from = 0;
    char chunk[kChunk];
    while (true) {
      if (const auto end = buf_.find(kHeadEnd, scan_from); end != std::string::npos) {
        const std::string_view head(buf_.data(), end + kHeadEnd.size());
        verdict = head.size() > limits_.max_head_bytes ? too_large() : check_head(head);
        return verdict == HeadVerdict::Ok ? Head::Complete : Head::TooLarge;
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

  // An answer of this layer's own, when cpp-httplib never sees the request.
  void refuse(int status, std::string_view reason, std::string_view body) {
    const std::string text = fmt::format(
        "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n"
        "Connection: close\r\n{}\r\n{}",
        status, reason, body.size(), limits_.refusal_headers, body);
    // Its own short budget: the request's deadline may be what has passed.
    const auto end = Clock::now() + std::min(limits_.write_timeout, kRefusalBudget);
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = t_.write_some(text.data() + done, text.size() - done, end);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (limits_.on_refused) limits_.on_refused(status);
  }

  int status() const { return status_; }
  bool says_close() const { return says_close_; }
  bool broken() const { return broken_; }

  bool is_readable() const override {
    if (pos_ < buf_.size() || t_.has_pending()) return true;
    return wait_fd(t_.fd(), POLLIN, until(limits_.read_timeout)) > 0;
  }

  bool is_writable() const override {
    return Clock::now() < deadline_ && wait_fd(t_.fd(), POLLOUT, until(limits_.write_timeout)) > 0;
  }

  ssize_t read(char* ptr, size_t size) override {
    if (size == 0) return 0;
    if (pos_ == buf_.size()) {
      if (Clock::now() >= deadline_) return fail();
      char chunk[kChunk];
      const ssize_t n = t_.read_some(chunk, sizeof chunk, until(limits_.read_timeout));
      if (n == kPeerClosed) return 0;
      if (n < 0) return fail();
      buf_.assign(chunk, static_cast<std::size_t>(n));
      pos_ = 0;
    }
    const std::size_t n = std::min(size, buf_.size() - pos_);
    std::memcpy(ptr, buf_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!answered_) note_answer(std::string_view(ptr, size));
    for (std::size_t done = 0; done < size;) {
      if (Clock::now() >= deadline_) return fail();
      const ssize_t n = t_.write_some(ptr + done, size - done, until(limits_.write_timeout));
      if (n <= 0) return fail();  // never 0: cpp-httplib would call again forever
      done += static_cast<std::size_t>(n);
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(t_.fd(), true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(t_.fd(), false, ip, port);
  }
  socket_t socket() const override { return t_.fd(); }

 private:
  static constexpr std::chrono::milliseconds kStopCheck{50};
  static constexpr std::chrono::milliseconds kRefusalBudget{1000};

  Clock::time_point until(std::chrono::milliseconds step) const {
    return std::min(deadline_, Clock::now() + step);
  }

  ssize_t fail() {
    broken_ = true;
    return -1;
  }

  HeadVerdict too_large() const {
    return first_line_size(buf_) > CPPHTTPLIB_REQUEST_URI_MAX_LENGTH ? HeadVerdict::UriTooLong
                                                                     : HeadVerdict::FieldsTooLarge;
  }

  // cpp-httplib writes an answer's status line and header fields in one call
  // before its body: read the status and whether the connection is to close.
  void note_answer(std::string_view data) {
    if (!data.starts_with("HTTP/1.") || data.size() < 12) return;
    int status = 0;
    for (std::size_t i = 9; i < 12; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(data[i]))) return;
      status = status * 10 + (data[i] - '0');
    }
    if (status < 200) return;  // "100 Continue": the real answer follows
    answered_ = true;
    status_ = status;
    const auto head = lowercase(data.substr(0, data.find(kHeadEnd)));
    says_close_ = head.find("\r\nconnection: close") != std::string::npos;
  }

  Transport& t_;
  const ConnectionLimits& limits_;
  std::string buf_;
  std::size_t pos_ = 0;
  Clock::time_point deadline_{};
  int status_ = 0;
  bool says_close_ = false;
  bool answered_ = false;
  bool broken_ = false;
};

}  // namespace

HeadVerdict check_head(std::string_view head) {
  if (first_line_size(head) > CPPHTTPLIB_REQUEST_URI_MAX_LENGTH) return HeadVerdict::UriTooLong;
  head.remove_prefix(first_line_size(head));
  while (!head.empty()) {
    const auto line = first_line_size(head);
    if (line > CPPHTTPLIB_HEADER_MAX_LENGTH) return HeadVerdict::FieldsTooLarge;
    head.remove_prefix(line);
  }
  return HeadVerdict::Ok;
}

AfterRequest serve_one_request(Transport& transport, const ConnectionLimits& limits,
                               Clock::time_point deadline, ConnectionState& state,
                               const ProcessRequest& process) {
  ConnectionStream stream(transport, limits, std::move(state.buffered));
  stream.begin(deadline);
  HeadVerdict verdict = HeadVerdict::Ok;
  const auto head = stream.read_head(verdict);
  if (head == ConnectionStream::Head::None) return AfterRequest::Close;
  if (head == ConnectionStream::Head::TimedOut) {
    stream.refuse(408, "Request Timeout", "the request did not arrive in time\n");
    return AfterRequest::Close;
  }
  if (head == ConnectionStream::Head::TooLarge) {
    if (verdict == HeadVerdict::UriTooLong)
      stream.refuse(414, "URI Too Long", "request line too long\n");
    else
      stream.refuse(431, "Request Header Fields Too Large", "request header fields too large\n");
    return AfterRequest::CloseLinger;
  }
  ++state.served;
  const bool last =
      state.served >= limits.keep_alive_max || head == ConnectionStream::Head::Truncated;
  bool closed = false;
  const bool ok = process(stream, last, closed);
  if (stream.says_close() && stream.status() >= 400) return AfterRequest::CloseLinger;
  if (!ok || closed || last || stream.says_close() || stream.broken()) return AfterRequest::Close;
  state.buffered = stream.take_unread();
  return AfterRequest::KeepAlive;
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
    HeadVerdict verdict = HeadVerdict::Ok;
    const auto head = stream.read_head(verdict);
    if (head == ConnectionStream::Head::None) break;
    if (head == ConnectionStream::Head::TimedOut) {
      stream.refuse(408, "Request Timeout", "the request did not arrive in time\n");
      break;
    }
    if (head == ConnectionStream::Head::TooLarge) {
      if (verdict == HeadVerdict::UriTooLong)
        stream.refuse(414, "URI Too Long", "request line too long\n");
      else
        stream.refuse(431, "Request Header Fields Too Large", "request header fields too large\n");
      return true;  // the rest of the head may still be on its way
    }
    // A head cut off by the client's close still gets cpp-httplib's 400.
    const bool last =
        served + 1 == limits.keep_alive_max || head == ConnectionStream::Head::Truncated;
    bool closed = false;
    const bool ok = process(stream, last, closed);
    // Refused for its form (a body, a malformed head): what it carried may
    // still be on its way.
    if (stream.says_close() && stream.status() >= 400) return true;
    if (!ok || closed || last || stream.says_close() || stream.broken()) break;
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

}  // namespace gpulens::server

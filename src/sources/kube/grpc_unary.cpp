// SPDX-License-Identifier: Apache-2.0
#include "sources/kube/grpc_unary.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

namespace gpulens::sources::kube {
namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// What one call gathers from nghttp2's callbacks.
struct Exchange {
  int fd = -1;
  std::int32_t stream = -1;
  std::string request_frame;  // gRPC's 5-byte prefix and the message
  std::size_t request_sent = 0;
  std::size_t max_body = 0;
  std::string body;
  bool body_too_large = false;
  bool closed = false;
  bool peer_closed = false;  // the server hung up (EPIPE, ECONNRESET)
  std::uint32_t close_error = 0;
  std::string http_status;
  std::string grpc_status;
  std::string grpc_message;
  std::string content_type;
};

ssize_t send_bytes(nghttp2_session*, const std::uint8_t* data, std::size_t length, int,
                   void* user) {
  auto& x = *static_cast<Exchange*>(user);
  const ssize_t n = ::send(x.fd, data, length, MSG_NOSIGNAL);
  if (n >= 0) return n;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return NGHTTP2_ERR_WOULDBLOCK;
  x.peer_closed = errno == EPIPE || errno == ECONNRESET;
  return NGHTTP2_ERR_CALLBACK_FAILURE;
}

ssize_t read_request(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length,
                     std::uint32_t* flags, nghttp2_data_source*, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  const std::size_t n = std::min(length, x.request_frame.size() - x.request_sent);
  std::memcpy(buf, x.request_frame.data() + x.request_sent, n);
  x.request_sent += n;
  if (x.request_sent == x.request_frame.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
              std::size_t namelen, const std::uint8_t* value, std::size_t valuelen, std::uint8_t,
              void* user) {
  auto& x = *static_cast<Exchange*>(user);
  if (frame->hd.stream_id != x.stream) return 0;
  const std::string_view n(reinterpret_cast<const char*>(name), namelen);
  // Header values are kept short: they are only shown in words.
  const std::string v(reinterpret_cast<const char*>(value), std::min<std::size_t>(valuelen, 200));
  if (n == ":status") x.http_status = v;
  if (n == "grpc-status") x.grpc_status = v;
  if (n == "grpc-message") x.grpc_message = v;
  if (n == "content-type") x.content_type = v;
  return 0;
}

int on_data(nghttp2_session*, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
            std::size_t len, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  if (stream != x.stream) return 0;
  if (x.body.size() + len > x.max_body) {
    x.body_too_large = true;
    return NGHTTP2_ERR_CALLBACK_FAILURE;  // ends the session: nothing more is read
  }
  x.body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int on_close(nghttp2_session*, std::int32_t stream, std::uint32_t error, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  if (stream == x.stream) {
    x.closed = true;
    x.close_error = error;
  }
  return 0;
}

struct SessionDeleter {
  void operator()(nghttp2_session* s) const { nghttp2_session_del(s); }
};
struct CallbacksDeleter {
  void operator()(nghttp2_session_callbacks* c) const { nghttp2_session_callbacks_del(c); }
};

nghttp2_nv header(std::string_view name, std::string_view value) {
  // nghttp2 copies neither; the strings outlive the submit call.
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
          value.size(), NGHTTP2_NV_FLAG_NONE};
}

Result<int> connect_unix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    return Error{fmt::format("the socket path {} is too long", path)};
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error{fmt::format("socket: {}", std::strerror(errno))};
  // A unix socket connects at once or fails at once (EAGAIN: the listener's
  // backlog is full, i.e. the kubelet is not accepting).
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == ENOENT) return Error{fmt::format("{}{}", kNoSocketError, path)};
    if (err == ECONNREFUSED) return Error{fmt::format("nothing listens on {}", path)};
    return Error{fmt::format("cannot connect to {}: {}", path, std::strerror(err))};
  }
  return fd;
}

Result<std::string> one_message(const Exchange& x, const std::string& method) {
  if (x.http_status != "200") {
    return Error{fmt::format("{} answered HTTP status {}", method,
                             x.http_status.empty() ? "(none)" : x.http_status)};
  }
  if (x.grpc_status.empty()) {
    return Error{fmt::format("{} answered without a gRPC status", method)};
  }
  if (x.grpc_status != "0") {
    long code = -1;
    try {
      code = std::stol(x.grpc_status);
    } catch (...) {
    }
    return Error{fmt::format("{} failed: gRPC status {}{}{}", method, grpc_status_name(code),
                             x.grpc_message.empty() ? "" : ": ", x.grpc_message)};
  }
  if (x.content_type.rfind("application/grpc", 0) != 0) {
    return Error{fmt::format("{} answered content-type '{}', not gRPC", method, x.content_type)};
  }
  // One length-prefixed message: a flag byte (1 = compressed, which was not
  // offered, so not accepted) and a 4-byte big-endian length.
  if (x.body.size() < 5) return Error{fmt::format("{} answered no message", method)};
  const auto* p = reinterpret_cast<const unsigned char*>(x.body.data());
  if (p[0] != 0) return Error{fmt::format("{} answered a compressed message", method)};
  const std::size_t length = (std::size_t{p[1]} << 24) | (std::size_t{p[2]} << 16) |
                             (std::size_t{p[3]} << 8) | std::size_t{p[4]};
  if (length != x.body.size() - 5) {
    return Error{
        fmt::format("{} answered {} bytes framed as {}", method, x.body.size() - 5, length)};
  }
  return x.body.substr(5);
}

}  // namespace

std::string grpc_status_name(long code) {
  static constexpr std::array<std::string_view, 17> kNames = {"OK",
                                                              "CANCELLED",
                                                              "UNKNOWN",
                                                              "INVALID_ARGUMENT",
                                                              "DEADLINE_EXCEEDED",
                                                              "NOT_FOUND",
                                                              "ALREADY_EXISTS",
                                                              "PERMISSION_DENIED",
                                                              "RESOURCE_EXHAUSTED",
                                                              "FAILED_PRECONDITION",
                                                              "ABORTED",
                                                              "OUT_OF_RANGE",
                                                              "UNIMPLEMENTED",
                                                              "INTERNAL",
                                                              "UNAVAILABLE",
                                                              "DATA_LOSS",
                                                              "UNAUTHENTICATED"};
  if (code >= 0 && code < static_cast<long>(kNames.size())) {
    return fmt::format("{} ({})", code, kNames[static_cast<std::size_t>(code)]);
  }
  return fmt::format("code {}", code);
}

Result<std::string> grpc_unary_call(const GrpcCall& call) {
  const auto deadline = Clock::now() + call.deadline;
  auto connected = connect_unix(call.socket_path);
  if (!connected) return connected.error();
  const Fd fd(*connected);

  Exchange x;
  x.fd = fd.get();
  x.max_body = call.max_answer_bytes + 5;
  const auto size = static_cast<std::uint32_t>(call.request.size());
  x.request_frame = std::string{'\0', static_cast<char>(size >> 24), static_cast<char>(size >> 16),
                                static_cast<char>(size >> 8), static_cast<char>(size)} +
                    call.request;

  nghttp2_session_callbacks* raw_callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&raw_callbacks) != 0) return Error{"out of memory"};
  const std::unique_ptr<nghttp2_session_callbacks, CallbacksDeleter> callbacks(raw_callbacks);
  nghttp2_session_callbacks_set_send_callback(raw_callbacks, send_bytes);
  nghttp2_session_callbacks_set_on_header_callback(raw_callbacks, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(raw_callbacks, on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(raw_callbacks, on_close);
  nghttp2_session* raw_session = nullptr;
  if (nghttp2_session_client_new(&raw_session, raw_callbacks, &x) != 0) {
    return Error{"out of memory"};
  }
  const std::unique_ptr<nghttp2_session, SessionDeleter> session(raw_session);

  nghttp2_submit_settings(raw_session, NGHTTP2_FLAG_NONE, nullptr, 0);
  const std::string user_agent = "gpulens/" GPULENS_VERSION;
  const std::array<nghttp2_nv, 7> headers = {header(":method", "POST"),
                                             header(":scheme", "http"),
                                             header(":path", call.method),
                                             header(":authority", "localhost"),
                                             header("content-type", "application/grpc"),
                                             header("te", "trailers"),
                                             header("user-agent", user_agent)};
  nghttp2_data_provider body{};
  body.read_callback = read_request;
  x.stream =
      nghttp2_submit_request(raw_session, nullptr, headers.data(), headers.size(), &body, nullptr);
  if (x.stream < 0) return Error{fmt::format("HTTP/2: {}", nghttp2_strerror(x.stream))};

  const Error hung_up{fmt::format("{} closed the connection before answering", call.socket_path)};
  std::array<std::uint8_t, 16384> buffer{};
  while (!x.closed) {
    if (const int rv = nghttp2_session_send(raw_session); rv != 0) {
      if (x.peer_closed) return hung_up;
      return Error{fmt::format("sending to {}: {}", call.socket_path, nghttp2_strerror(rv))};
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return Error{fmt::format("{} gave no answer within {:.1f} s", call.socket_path,
                               static_cast<double>(call.deadline.count()) / 1000.0)};
    }
    std::array<pollfd, 2> fds{};
    fds[0] = {fd.get(), POLLIN, 0};
    if (nghttp2_session_want_write(raw_session)) fds[0].events |= POLLOUT;
    fds[1] = {call.cancel_fd, POLLIN, 0};
    const int ready =
        ::poll(fds.data(), call.cancel_fd >= 0 ? 2 : 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) return Error{fmt::format("poll: {}", std::strerror(errno))};
    if (call.cancel_fd >= 0 && (fds[1].revents & POLLIN)) return Error{"cancelled"};
    if (ready <= 0 || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    const ssize_t n = ::recv(fd.get(), buffer.data(), buffer.size(), 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      if (errno == ECONNRESET) return hung_up;
      return Error{fmt::format("reading {}: {}", call.socket_path, std::strerror(errno))};
    }
    if (n == 0) return hung_up;
    const ssize_t used =
        nghttp2_session_mem_recv(raw_session, buffer.data(), static_cast<std::size_t>(n));
    if (x.body_too_large) {
      return Error{
          fmt::format("{} answered more than {} bytes", call.socket_path, call.max_answer_bytes)};
    }
    if (used < 0) {
      return Error{fmt::format("{} did not speak HTTP/2: {}", call.socket_path,
                               nghttp2_strerror(static_cast<int>(used)))};
    }
  }
  if (x.close_error != NGHTTP2_NO_ERROR && x.grpc_status.empty()) {
    return Error{fmt::format("{} reset the call: {}", call.socket_path,
                             nghttp2_http2_strerror(x.close_error))};
  }
  return one_message(x, call.method);
}

}  // namespace gpulens::sources::kube

// SPDX-License-Identifier: Apache-2.0
#pragma once
// One unary gRPC call over a unix socket (the kubelet's pod-resources API), with
// HTTP/2 from nghttp2 and gRPC's framing here (grpc.io, "gRPC over HTTP2"): the
// request's one message goes out, the answer's one message comes back, and the
// call ends by its deadline whatever the server does. The gRPC C++ library would
// bring abseil, re2, c-ares and upb into each static binary (docs/kubernetes.md,
// "Why not gRPC's library") for one call every few seconds.
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace gpulens::sources::kube {

struct GrpcCall {
  std::string socket_path;
  std::string method;   // "/package.Service/Method"
  std::string request;  // the serialized request message
  std::chrono::milliseconds deadline{2000};
  std::size_t max_answer_bytes = 16u << 20;
  // Read end of a pipe whose becoming readable abandons the call (the reader's
  // stop); -1 for none.
  int cancel_fd = -1;
};

// How the error of a call to a socket that does not exist begins.
inline constexpr std::string_view kNoSocketError = "no socket at ";

// The answer's message; errors name the socket, the HTTP or gRPC status, or the
// deadline, in words for /api/v1/health.
Result<std::string> grpc_unary_call(const GrpcCall& call);

// gRPC's status codes by name ("UNIMPLEMENTED"); "code N" past the known ones.
std::string grpc_status_name(long code);

}  // namespace gpulens::sources::kube

#pragma once
// cpp-httplib's Server and SSLServer with the agent's connection loop
// (http_connection.hpp) instead of their own. In 0.11 the per-connection entry
// point, process_and_close_socket, is a private virtual: it can be overridden but
// not called, so the override serves the connection itself and hands each
// request to the protected process_request, which does the parsing and routing.
//
// This file (with guarded_server.cpp) is the only one that reaches into
// cpp-httplib's internals: the private virtual process_and_close_socket, the
// protected process_request and svr_sock_. Those are not API and change between
// releases without notice, so the build stops on any other version than the one
// this was written and tested against; after an upgrade, re-read Server's
// process_and_close_socket and process_request, then move the check. The rest of
// src/http uses only httplib's public types (Stream, Request, Response).
#include <functional>
#include <memory>
#include <string_view>

#include "http/connection_gate.hpp"
#include "http/http.hpp"
#include "http/http_connection.hpp"

#ifndef CPPHTTPLIB_VERSION
#error "guarded_server.hpp needs cpp-httplib's httplib.h (CPPHTTPLIB_VERSION)"
#endif
static_assert(std::string_view(CPPHTTPLIB_VERSION).starts_with("0.11."),
              "guarded_server overrides cpp-httplib 0.11 internals; check them against this "
              "version before moving this assertion");

namespace gpulens::server {

// Plain HTTP: cpp-httplib's accept loop hands each connection to
// process_and_close_socket on its thread pool; the override passes it on to a
// ConnectionGate at once, whose own workers answer only complete requests.
class GuardedServer final : public httplib::Server {
 public:
  GuardedServer(ConnectionLimits limits, std::size_t workers);
  ~GuardedServer() override;

 private:
  bool process_and_close_socket(socket_t sock) override;

  ConnectionLimits limits_;
  std::unique_ptr<ConnectionGate> gate_;
};

class GuardedSslServer final : public httplib::SSLServer {
 public:
  GuardedSslServer(const std::function<bool(SSL_CTX&)>& setup_context, ConnectionLimits limits)
      : httplib::SSLServer(setup_context), limits_(std::move(limits)) {}

 private:
  bool process_and_close_socket(socket_t sock) override;

  ConnectionLimits limits_;
};

}  // namespace gpulens::server

#pragma once
// cpp-httplib's Server and SSLServer with the agent's connection loop
// (http_connection.hpp) instead of their own. In 0.11 the per-connection entry
// point, process_and_close_socket, is a private virtual: it can be overridden but
// not called, so the override serves the connection itself and hands each
// request to the protected process_request, which does the parsing and routing.
#include <functional>

#include "http/http.hpp"
#include "http/http_connection.hpp"

namespace gpulens::server {

class GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(ConnectionLimits limits) : limits_(std::move(limits)) {}

 private:
  bool process_and_close_socket(socket_t sock) override;

  ConnectionLimits limits_;
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

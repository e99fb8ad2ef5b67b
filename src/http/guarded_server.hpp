#pragma once
// cpp-httplib's Server and SSLServer with the agent's connection loop
// (http_connection.hpp) instead of their own. In 0.11 the per-connection entry
// point, process_and_close_socket, is a private virtual: it can be overridden but
// not called, so the override serves the connection itself and hands each
// request to the protected process_request, which does the parsing and routing.
#include <functional>
#include <memory>

#include "http/connection_gate.hpp"
#include "http/http.hpp"
#include "http/http_connection.hpp"

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

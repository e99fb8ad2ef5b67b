#include "http/guarded_server.hpp"

namespace gpulens::server {

GuardedServer::GuardedServer(ConnectionLimits limits, std::size_t workers)
    : limits_(std::move(limits)) {
  gate_ = std::make_unique<ConnectionGate>(
      limits_, workers, svr_sock_,
      [this](httplib::Stream& stream, bool close_connection, bool& connection_closed) {
        return process_request(stream, close_connection, connection_closed, nullptr);
      });
}

// The gate's threads call process_request: they end before the server goes.
GuardedServer::~GuardedServer() {
  gate_.reset();
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  gate_->adopt(sock);
  return true;
}

bool GuardedSslServer::process_and_close_socket(socket_t sock) {
  // The handshake counts against the first request's deadline.
  const auto deadline = Clock::now() + limits_.request_timeout;
  TlsTransport transport(sock, ssl_context());
  bool linger = false;
  if (transport.accept(deadline, limits_.read_timeout)) {
    SSL* ssl = transport.ssl();
    linger = serve_connection(
        transport, limits_, deadline, svr_sock_,
        [this, ssl](httplib::Stream& stream, bool close_connection, bool& connection_closed) {
          return process_request(stream, close_connection, connection_closed,
                                 [ssl](httplib::Request& req) { req.ssl = ssl; });
        });
  }
  finish_connection(transport, linger);
  return true;
}

}  // namespace gpulens::server

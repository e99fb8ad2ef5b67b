#include "http/guarded_server.hpp"

namespace gpulens::server {

bool GuardedServer::process_and_close_socket(socket_t sock) {
  // The clock starts when a worker takes the connection: time spent queued
  // behind busy workers is not the client's.
  const auto deadline = Clock::now() + limits_.request_timeout;
  PlainTransport transport(sock);
  const bool linger = serve_connection(
      transport, limits_, deadline, svr_sock_,
      [this](httplib::Stream& stream, bool close_connection, bool& connection_closed) {
        return process_request(stream, close_connection, connection_closed, nullptr);
      });
  finish_connection(transport, linger);
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

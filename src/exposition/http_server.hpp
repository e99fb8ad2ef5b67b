// SPDX-License-Identifier: Apache-2.0
#pragma once
// The agent's HTTP side: /metrics, /api/v1/ and the dashboard, read-only (GET
// and HEAD only), with TLS and basic auth from an exporter-toolkit web config,
// limits on request size and time, and counters of what it answered.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "agent/kernel_store.hpp"
#include "agent/snapshot.hpp"
#include "core/result.hpp"
#include "exposition/exposition.hpp"
#include "http/basic_auth.hpp"
#include "http/http_listener.hpp"
#include "http/http_message.hpp"
#include "http/tls_identity.hpp"
#include "http/web_config.hpp"
#include "store/history_query.hpp"
#include "store/store_writer.hpp"

namespace gpulens::exposition {

struct ServerOptions {
  std::string listen = "127.0.0.1:9401";
  std::string web_config;  // path; empty = plain HTTP without auth
  ExpositionOptions exposition;
  bool show_cmdline = false;
  int threads = 8;
  int read_timeout_s = 5;    // each wait for a client's bytes
  int write_timeout_s = 10;  // each wait for a client to take bytes
  int keep_alive_s = 5;
  // A request, from its first byte to its answer's last (the first one from the
  // connection's start, TLS handshake included): a client that dribbles bytes
  // cannot hold a worker thread longer.
  std::chrono::milliseconds request_timeout{15000};
  std::size_t max_header_bytes = 32 * 1024;  // request line and header fields together
  std::size_t max_body_bytes = 4096;         // GET requests carry no body
  std::chrono::milliseconds query_deadline{5000};
};

// Where the handlers get their data; plain functions so tests can feed a fixed
// snapshot without an agent.
struct ApiContext {
  std::function<agent::SnapshotPtr()> snapshot;
  std::function<std::optional<store::StoreStatus>()> store_status;  // nullopt: disabled
  std::string history_path;                                         // empty: no history to read
  // The jobs' kernel summaries (--kernels-socket); null and nullopt when off.
  const agent::KernelStore* kernels = nullptr;
  std::function<std::optional<agent::KernelIntakeStatus>()> kernel_status;
  std::function<std::optional<KernelSeriesStatus>()> kernel_series;
};

// Host and port of --listen: "127.0.0.1:9401", "[::1]:9401", ":9401" (all).
Result<std::pair<std::string, int>> parse_listen(const std::string& listen);

class HttpServer {
 public:
  static Result<std::unique_ptr<HttpServer>> create(ServerOptions options, ApiContext context);
  ~HttpServer();

  // Binds the socket, so that "address in use" is reported before serving.
  Status bind();
  // Serves until stop(); call from one thread.
  void serve();
  void stop();
  // Re-reads the web config: users and certificates (SIGHUP). Turning TLS on
  // or off needs a restart.
  Status reload();

  int port() const { return port_; }
  std::string url() const;
  bool tls() const { return tls_enabled_; }
  bool auth() const;

  // Every path with a route, sorted (the API index's test holds them equal).
  std::vector<std::string> route_paths() const;

  // Counters for /metrics (exposed for tests).
  std::vector<HttpCount> request_counts() const;

 private:
  using Handler = std::function<void(const http::Request&, http::Response&)>;

  HttpServer(ServerOptions options, ApiContext context);
  // Routes are exact paths; only GET (and HEAD, answered as GET) reach them.
  void get(std::string path, Handler handler) { routes_[std::move(path)] = std::move(handler); }
  // Every request: the checks every path shares, the route, and the answers
  // for errors; counted in request_counts().
  void handle(const http::Request& req, http::Response& res);
  // Answers before the route: bodies, methods and authentication.
  bool refuse_before_routing(const http::Request& req, http::Response& res);
  void count(const http::Request& req, const http::Response& res);
  void count_refused(int status);
  http::AuthResult authenticate(const http::Request& req);
  std::shared_ptr<http::BasicAuth> make_auth(const http::WebConfig& web) const;
  std::shared_ptr<http::BasicAuth> current_auth() const;
  SelfStats self_stats() const;

  ServerOptions options_;
  ApiContext context_;
  http::WebConfig web_;
  bool tls_enabled_ = false;
  http::TlsIdentity identity_;
  http::HeaderFields default_headers_;  // on every answer; fixed at start like TLS on or off
  std::map<std::string, Handler> routes_;
  std::string host_;
  int port_ = 0;
  std::unique_ptr<store::HistoryReader> reader_;

  mutable std::mutex mutex_;
  std::shared_ptr<http::BasicAuth> auth_;
  std::map<std::pair<std::string, int>, std::uint64_t> counts_;
  std::atomic<double> last_scrape_s_{0};
  std::atomic<int> kernel_answers_{0};  // /api/v1/kernels answers being built
  // Last: its threads call handle(), so it goes before everything handle() uses.
  std::unique_ptr<http::HttpListener> listener_;

  friend void register_routes(HttpServer& server);
};

}  // namespace gpulens::exposition

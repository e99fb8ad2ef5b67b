#include "exposition/http_server.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

#include "agent/log.hpp"
#include "http/guarded_server.hpp"
#include "http/http.hpp"

namespace gpulens::server {

void register_routes(HttpServer& server);

namespace {

constexpr std::size_t kKeepAliveMax = 100;

// A strict Content-Security-Policy: the dashboard loads only its own files.
constexpr const char* kCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

// On every answer, the connection layer's own refusals included.
httplib::Headers response_headers(const WebConfig& web) {
  httplib::Headers headers = {{"X-Content-Type-Options", "nosniff"},
                              {"X-Frame-Options", "DENY"},
                              {"Referrer-Policy", "no-referrer"},
                              {"Content-Security-Policy", kCsp}};
  for (const auto& [name, value] : web.headers) headers.emplace(name, value);
  return headers;
}

ConnectionLimits connection_limits(const ServerOptions& o, const WebConfig& web,
                                   std::function<void(int)> on_refused) {
  ConnectionLimits limits;
  limits.request_timeout = o.request_timeout;
  limits.read_timeout = std::chrono::seconds(o.read_timeout_s);
  limits.write_timeout = std::chrono::seconds(o.write_timeout_s);
  limits.keep_alive_timeout = std::chrono::seconds(o.keep_alive_s);
  limits.keep_alive_max = kKeepAliveMax;
  limits.max_head_bytes = o.max_header_bytes;
  for (const auto& [name, value] : response_headers(web))
    limits.refusal_headers += name + ": " + value + "\r\n";
  limits.on_refused = std::move(on_refused);
  return limits;
}

// A Content-Length value: digits only; nullopt for anything else.
std::optional<std::uint64_t> content_length(std::string_view text) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// Answers after which the connection closes: the request's framing is in doubt,
// and whatever follows it on the connection must not be read as a request.
bool closes_connection(int status) {
  return status == 400 || status == 408 || status == 413 || status == 414 || status == 431;
}

}  // namespace

Result<std::pair<std::string, int>> parse_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return Error{
        fmt::format("--listen '{}' needs HOST:PORT (e.g. 127.0.0.1:9400 or :9400)", listen)};
  }
  std::string host = listen.substr(0, colon);
  const std::string port_text = listen.substr(colon + 1);
  int port = -1;
  const auto [ptr, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
      port < 0 || port > 65535) {
    return Error{fmt::format("--listen '{}': the port must be a number from 0 to 65535", listen)};
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  return std::make_pair(host, port);
}

HttpServer::HttpServer(ServerOptions options, ApiContext context)
    : options_(std::move(options)), context_(std::move(context)) {}

HttpServer::~HttpServer() {
  stop();
  // The connection gate's workers serve requests after the accept loop has
  // ended, until the server object goes; their handlers use this object's
  // members (counts_, mutex_, auth_, reader_). Members die in reverse order of
  // declaration, and those come after server_: end the workers first.
  server_.reset();
}

Result<std::unique_ptr<HttpServer>> HttpServer::create(ServerOptions options, ApiContext context) {
  auto listen = parse_listen(options.listen);
  if (!listen) return listen.error();
  std::unique_ptr<HttpServer> s(new HttpServer(std::move(options), std::move(context)));
  s->host_ = listen->first;
  s->port_ = listen->second;
  if (!s->options_.web_config.empty()) {
    auto web = load_web_config(s->options_.web_config);
    if (!web) return web.error();
    s->web_ = std::move(*web);
  }
  s->auth_ = std::make_shared<BasicAuth>(s->web_.users);
  HttpServer* self = s.get();
  auto limits =
      connection_limits(s->options_, s->web_, [self](int status) { self->count_refused(status); });
  if (s->web_.tls) {
    if (auto st = s->identity_.load(*s->web_.tls); !st) return st.error();
    s->tls_enabled_ = true;
    auto ssl = std::make_unique<GuardedSslServer>(
        [self](SSL_CTX& ctx) { return self->identity_.configure(ctx); }, std::move(limits));
    if (!ssl->is_valid()) {
      return Error{"cannot set up TLS with the web config's certificate and key"};
    }
    s->server_ = std::move(ssl);
  } else {
    s->server_ = std::make_unique<GuardedServer>(
        std::move(limits), static_cast<std::size_t>(std::max(1, s->options_.threads)));
  }
  if (!s->context_.history_path.empty()) {
    s->reader_ = std::make_unique<store::HistoryReader>(s->context_.history_path,
                                                        s->options_.query_deadline);
  }
  s->setup();
  return s;
}

void HttpServer::setup() {
  httplib::Server& srv = *server_;
  const int threads = std::max(1, options_.threads);
  srv.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  // The connection loop (ConnectionLimits) enforces the timeouts; cpp-httplib
  // still writes the keep-alive ones into its Keep-Alive header.
  srv.set_read_timeout(options_.read_timeout_s, 0);
  srv.set_write_timeout(options_.write_timeout_s, 0);
  srv.set_keep_alive_timeout(options_.keep_alive_s);
  srv.set_keep_alive_max_count(kKeepAliveMax);
  srv.set_payload_max_length(options_.max_body_bytes);
  srv.set_default_headers(response_headers(web_));

  // Nothing here changes anything: only GET and HEAD reach the handlers, and
  // every request passes authentication first.
  srv.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // No endpoint takes a body, and cpp-httplib reads none for GET and HEAD:
    // one that comes anyway is refused when too large (its limit would never
    // apply), and the connection closes after the answer so that the body is
    // never parsed as the next request.
    const bool chunked = req.has_header("Transfer-Encoding");
    const std::string length_text = req.get_header_value("Content-Length");
    const auto length = content_length(length_text);
    if (chunked || (length && *length > 0)) res.set_header("Connection", "close");
    // Two Content-Length fields (or one beside Transfer-Encoding) leave the
    // request's end in doubt between this server and any proxy before it.
    const bool ambiguous =
        req.get_header_value_count("Content-Length") > 1 || (chunked && !length_text.empty());
    if (ambiguous || (!length_text.empty() && !length)) {
      res.set_header("Connection", "close");
      res.status = 400;
      res.set_content("{\"error\":\"bad Content-Length\"}\n", "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (length && *length > options_.max_body_bytes) {
      res.status = 413;
      res.set_content("{\"error\":\"requests carry no body\"}\n", "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content("{\"error\":\"only GET and HEAD are served\"}\n", "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!authorized(req)) {
      res.status = 401;
      res.set_header("WWW-Authenticate", "Basic realm=\"gpulens\", charset=\"UTF-8\"");
      res.set_content("{\"error\":\"authentication required\"}\n", "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  srv.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (closes_connection(res.status) && !res.has_header("Connection"))
          res.set_header("Connection", "close");
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        const std::string text = res.status == 404 ? "not found" : "bad request";
        if (req.path.starts_with("/api/"))
          res.set_content(fmt::format("{{\"error\":\"{}\"}}\n", text), "application/json");
        else
          res.set_content(text + "\n", "text/plain; charset=utf-8");
        return httplib::Server::HandlerResponse::Handled;
      }));
  srv.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        log_error("{} {} failed: {}", req.method, req.path, what);
        res.status = 500;
        res.set_content("{\"error\":\"internal error\"}\n", "application/json");
      });
  srv.set_logger(
      [this](const httplib::Request& req, const httplib::Response& res) { count(req, res); });
  register_routes(*this);
}

bool HttpServer::authorized(const httplib::Request& req) {
  auto auth = current_auth();
  if (!auth->enabled()) return true;
  return auth->check(req.get_header_value("Authorization"));
}

std::shared_ptr<BasicAuth> HttpServer::current_auth() const {
  std::lock_guard lock(mutex_);
  return auth_;
}

bool HttpServer::auth() const {
  return current_auth()->enabled();
}

void HttpServer::count(const httplib::Request& req, const httplib::Response& res) {
  static const char* const kHandlers[] = {
      "/metrics",         "/api/v1/version", "/api/v1/health",
      "/api/v1/devices",  "/api/v1/latest",  "/api/v1/history",
      "/api/v1/timeline", "/api/v1/alerts",  "/",
      "/assets/app.js",   "/assets/app.css", "/assets/icon.svg"};
  std::string handler = "other";
  for (const char* h : kHandlers) {
    if (req.path == h) handler = h;
  }
  std::lock_guard lock(mutex_);
  ++counts_[{handler, res.status}];
}

// Answers the connection loop gave before cpp-httplib saw the request (408,
// 414, 431): no handler was chosen.
void HttpServer::count_refused(int status) {
  std::lock_guard lock(mutex_);
  ++counts_[{"other", status}];
}

std::vector<HttpCount> HttpServer::request_counts() const {
  std::lock_guard lock(mutex_);
  std::vector<HttpCount> out;
  for (const auto& [key, n] : counts_) out.push_back(HttpCount{key.first, key.second, n});
  return out;
}

Status HttpServer::bind() {
  if (port_ == 0) {
    const int port = server_->bind_to_any_port(host_);
    if (port < 0)
      return Error{fmt::format("cannot listen on {}: {}", options_.listen, std::strerror(errno))};
    port_ = port;
    return ok_status();
  }
  if (!server_->bind_to_port(host_, port_)) {
    return Error{
        fmt::format("cannot listen on {}:{}: {} (another agent or dcgm-exporter on the "
                    "port? choose one with --listen)",
                    host_, port_, std::strerror(errno))};
  }
  return ok_status();
}

void HttpServer::serve() {
  serving_ = true;
  if (!stop_requested_) server_->listen_after_bind();
  serving_ = false;
}

void HttpServer::stop() {
  if (!server_) return;
  // cpp-httplib's stop() does nothing until its accept loop runs: a stop that
  // comes between serve()'s start and that loop (--exit-at-end on a short
  // replay) would be lost and serve() would never return. So the request is
  // remembered, and a serve() already on its way is waited for.
  stop_requested_ = true;
  while (serving_ && !server_->is_running()) std::this_thread::sleep_for(kStopPoll);
  server_->stop();
}

std::string HttpServer::url() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}", tls_enabled_ ? "https" : "http", v6 ? "[" : "", host_,
                     v6 ? "]" : "", port_);
}

Status HttpServer::reload() {
  if (options_.web_config.empty()) return ok_status();
  auto web = load_web_config(options_.web_config);
  if (!web) return web.error();
  if (web->tls.has_value() != tls_enabled_) {
    return Error{"turning TLS on or off needs a restart; the web config was not reloaded"};
  }
  if (web->tls) {
    if (auto s = identity_.load(*web->tls); !s) return s;
  }
  auto auth = std::make_shared<BasicAuth>(web->users);
  std::lock_guard lock(mutex_);
  auth_ = std::move(auth);
  web_ = std::move(*web);
  return ok_status();
}

}  // namespace gpulens::server

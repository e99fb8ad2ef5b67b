// SPDX-License-Identifier: Apache-2.0
#include "exposition/http_server.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

#include "agent/log.hpp"
#include "http/open_files.hpp"

namespace gpulens::exposition {

void register_routes(HttpServer& server);

namespace {

constexpr std::size_t kKeepAliveMax = 100;

// A strict Content-Security-Policy: the dashboard loads only its own files.
constexpr const char* kCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

// On every answer, the connection layer's own refusals included.
// The web config's headers come after them; it can only make X-Frame-Options
// SAMEORIGIN (which replaces DENY), never repeat or loosen another of these
// (web_config.cpp refuses that at load).
http::HeaderFields response_headers(const http::WebConfig& web) {
  http::Response defaults;
  defaults.headers = {{"X-Content-Type-Options", "nosniff"},
                      {"X-Frame-Options", "DENY"},
                      {"Referrer-Policy", "no-referrer"},
                      {"Content-Security-Policy", kCsp}};
  for (const auto& [name, value] : web.headers) defaults.set_header(name, value);
  return defaults.headers;
}

http::ConnectionLimits connection_limits(const ServerOptions& o, const http::WebConfig& web,
                                         std::function<void(int)> on_refused) {
  http::ConnectionLimits limits;
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
        fmt::format("--listen '{}' needs HOST:PORT (e.g. 127.0.0.1:9401 or :9401)", listen)};
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
  // The listener's workers serve requests after the accept loop has ended,
  // until the listener goes; handle() uses this object's members (counts_,
  // mutex_, auth_, reader_, routes_). listener_ is declared last so that it dies
  // first; the reset says so where it matters.
  listener_.reset();
}

Result<std::unique_ptr<HttpServer>> HttpServer::create(ServerOptions options, ApiContext context) {
  auto listen = parse_listen(options.listen);
  if (!listen) return listen.error();
  std::unique_ptr<HttpServer> s(new HttpServer(std::move(options), std::move(context)));
  s->host_ = listen->first;
  s->port_ = listen->second;
  if (!s->options_.web_config.empty()) {
    auto web = http::load_web_config(s->options_.web_config);
    if (!web) return web.error();
    s->web_ = std::move(*web);
  }
  s->auth_ = s->make_auth(s->web_);
  s->default_headers_ = response_headers(s->web_);
  HttpServer* self = s.get();
  auto limits =
      connection_limits(s->options_, s->web_, [self](int status) { self->count_refused(status); });
  s->listener_ = std::make_unique<http::HttpListener>(
      std::move(limits), static_cast<std::size_t>(std::max(1, s->options_.threads)),
      [self](const http::Request& req, http::Response& res) { self->handle(req, res); });
  if (s->web_.tls) {
    if (auto st = s->identity_.load(*s->web_.tls); !st) return st.error();
    s->tls_enabled_ = true;
    if (!s->listener_->enable_tls([self](SSL_CTX& ctx) { return self->identity_.configure(ctx); }))
      return Error{"cannot set up TLS with the web config's certificate and key"};
  }
  if (!s->context_.history_path.empty()) {
    s->reader_ = std::make_unique<store::HistoryReader>(s->context_.history_path,
                                                        s->options_.query_deadline);
  }
  register_routes(*s);
  return s;
}

// Nothing here changes anything: only GET and HEAD reach the handlers, and
// every request passes authentication first.
bool HttpServer::refuse_before_routing(const http::Request& req, http::Response& res) {
  // No endpoint takes a body, and none is ever read: one that comes anyway is
  // refused when too large, and the connection closes after the answer so that
  // the body is never parsed as the next request (http_connection.cpp).
  const bool chunked = req.has_header("Transfer-Encoding");
  const std::string length_text = req.header("Content-Length");
  const auto length = content_length(length_text);
  if (chunked || (length && *length > 0)) res.set_header("Connection", "close");
  // Two Content-Length fields (or one beside Transfer-Encoding) leave the
  // request's end in doubt between this server and any proxy before it.
  const bool ambiguous =
      req.header_count("Content-Length") > 1 || (chunked && !length_text.empty());
  if (ambiguous || (!length_text.empty() && !length)) {
    res.set_header("Connection", "close");
    res.status = 400;
    res.set_content("{\"error\":\"bad Content-Length\"}\n", "application/json");
    return true;
  }
  if (length && *length > options_.max_body_bytes) {
    res.status = 413;
    res.set_content("{\"error\":\"requests carry no body\"}\n", "application/json");
    return true;
  }
  if (req.method != "GET" && req.method != "HEAD") {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("{\"error\":\"only GET and HEAD are served\"}\n", "application/json");
    return true;
  }
  const auto auth = authenticate(req);
  if (auth == http::AuthResult::Busy) {
    // Password checks are at their limit (guessers, most likely): this one is
    // refused at once rather than holding a worker until a slot frees.
    res.status = 429;
    res.set_header("Retry-After", "1");
    res.set_content("{\"error\":\"too many password checks at once; retry\"}\n",
                    "application/json");
    return true;
  }
  if (auth == http::AuthResult::Denied) {
    res.status = 401;
    res.set_header("WWW-Authenticate", "Basic realm=\"gpulens\", charset=\"UTF-8\"");
    res.set_content("{\"error\":\"authentication required\"}\n", "application/json");
    return true;
  }
  return false;
}

void HttpServer::handle(const http::Request& req, http::Response& res) {
  res.headers = default_headers_;
  if (!refuse_before_routing(req, res)) {
    const auto route = routes_.find(req.path);
    if (route == routes_.end()) {
      res.status = 404;
    } else {
      try {
        route->second(req, res);
      } catch (const std::exception& e) {
        agent::log_error("{} {} failed: {}", req.method, req.path, e.what());
        res.status = 500;
        res.set_content("{\"error\":\"internal error\"}\n", "application/json");
      }
    }
  }
  if (res.status >= 400) {
    if (closes_connection(res.status) && !res.has_header("Connection"))
      res.set_header("Connection", "close");
    if (res.body.empty()) {
      const std::string text = res.status == 404 ? "not found" : "bad request";
      if (req.path.starts_with("/api/"))
        res.set_content(fmt::format("{{\"error\":\"{}\"}}\n", text), "application/json");
      else
        res.set_content(text + "\n", "text/plain; charset=utf-8");
    }
  }
  count(req, res);
}

http::AuthResult HttpServer::authenticate(const http::Request& req) {
  auto auth = current_auth();
  if (!auth->enabled()) return http::AuthResult::Ok;
  return auth->authenticate(req.header("Authorization"));
}

std::shared_ptr<http::BasicAuth> HttpServer::make_auth(const http::WebConfig& web) const {
  // A quarter of the workers may check passwords at once, and no more than half
  // the CPU cores: the rest stay free for requests whose password is
  // remembered (two checks at once took the whole of a 2-core machine).
  const auto workers = static_cast<std::size_t>(std::max(1, options_.threads));
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t hashing = std::min(workers / 4, cores / 2);
  return std::make_shared<http::BasicAuth>(web.users, std::max<std::size_t>(1, hashing));
}

std::shared_ptr<http::BasicAuth> HttpServer::current_auth() const {
  std::lock_guard lock(mutex_);
  return auth_;
}

bool HttpServer::auth() const {
  return current_auth()->enabled();
}

void HttpServer::count(const http::Request& req, const http::Response& res) {
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

// Answers the connection loop gave before a request was parsed (400, 408, 414,
// 431): no handler was chosen.
void HttpServer::count_refused(int status) {
  std::lock_guard lock(mutex_);
  ++counts_[{"other", status}];
}

std::vector<std::string> HttpServer::route_paths() const {
  std::vector<std::string> paths;
  for (const auto& [path, handler] : routes_) paths.push_back(path);
  return paths;  // std::map: already sorted
}

std::vector<HttpCount> HttpServer::request_counts() const {
  std::lock_guard lock(mutex_);
  std::vector<HttpCount> out;
  for (const auto& [key, n] : counts_) out.push_back(HttpCount{key.first, key.second, n});
  return out;
}

Status HttpServer::bind() {
  // Every connection is a descriptor: the soft limit goes up to the hard one
  // before the first is accepted (open_files.hpp says why).
  const auto files = http::raise_open_files_limit();
  if (!files.error.empty()) {
    agent::log_warning("cannot raise the open files limit ({}); it stays {}", files.error,
                       files.now);
  } else if (files.now != files.before) {
    agent::log_info("open files limit raised from {} to {} (the hard limit)", files.before,
                    files.now);
  }
  if (files.error.empty() && files.now < http::ConnectionGate::kMaxOpen + 64) {
    agent::log_warning(
        "the open files limit is {}: past about {} connections the longest-waiting one is "
        "closed for each new one; LimitNOFILE=65536 (systemd) raises it",
        files.now, files.now > 64 ? files.now - 64 : 0);
  }
  const int port = listener_->bind(host_, port_);
  if (port < 0 && port_ == 0)
    return Error{fmt::format("cannot listen on {}: {}", options_.listen, std::strerror(errno))};
  if (port < 0) {
    return Error{
        fmt::format("cannot listen on {}:{}: {} (another agent or dcgm-exporter on the "
                    "port? choose one with --listen)",
                    host_, port_, std::strerror(errno))};
  }
  port_ = port;
  return ok_status();
}

void HttpServer::serve() {
  listener_->listen();
}

// A stop that comes before serve() (--exit-at-end on a short replay) makes
// serve() return at once: it is never lost.
void HttpServer::stop() {
  if (listener_) listener_->stop();
}

std::string HttpServer::url() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}", tls_enabled_ ? "https" : "http", v6 ? "[" : "", host_,
                     v6 ? "]" : "", port_);
}

Status HttpServer::reload() {
  if (options_.web_config.empty()) return ok_status();
  auto web = http::load_web_config(options_.web_config);
  if (!web) return web.error();
  if (web->tls.has_value() != tls_enabled_) {
    return Error{"turning TLS on or off needs a restart; the web config was not reloaded"};
  }
  if (web->tls) {
    if (auto s = identity_.load(*web->tls); !s) return s;
  }
  auto auth = make_auth(*web);
  std::lock_guard lock(mutex_);
  auth_ = std::move(auth);
  web_ = std::move(*web);
  return ok_status();
}

}  // namespace gpulens::exposition

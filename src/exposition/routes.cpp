// SPDX-License-Identifier: Apache-2.0
// The handlers behind each path. Each one reads the published snapshot or the
// history store and answers; none changes anything on the GPU or the host.
// Here /metrics and the dashboard's assets, and register_routes, which adds every
// group; the JSON API is routes_api.cpp.
#include "exposition/routes.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "exposition/metrics_encoding.hpp"
#include "exposition/web_assets.hpp"

namespace gpulens::exposition {
namespace {

std::optional<std::pair<double, double>> self_usage() {
  // /proc/self/stat fields 14/15 are user/system ticks; statm field 2 is RSS pages.
  std::ifstream statm("/proc/self/statm");
  long pages = 0, rss = 0;
  if (!(statm >> pages >> rss)) return std::nullopt;
  std::ifstream stat("/proc/self/stat");
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = content.rfind(')');
  double cpu = 0;
  if (close != std::string::npos) {
    unsigned long utime = 0, stime = 0;
    if (std::sscanf(content.c_str() + close + 2,
                    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) == 2) {
      cpu = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  return std::make_pair(static_cast<double>(rss) * static_cast<double>(sysconf(_SC_PAGESIZE)), cpu);
}

}  // namespace

SelfStats HttpServer::self_stats() const {
  SelfStats s;
  if (context_.store_status) s.store = context_.store_status();
  if (context_.kernel_status) s.kernels = context_.kernel_status();
  if (context_.kernel_series) s.kernel_series = context_.kernel_series();
  s.http = request_counts();
  s.last_scrape_s = last_scrape_s_.load();
  if (const auto usage = self_usage()) {
    s.rss_bytes = usage->first;
    s.cpu_seconds = usage->second;
  }
  if (const auto snap = context_.snapshot()) s.start_time = snap->started_at;
  return s;
}

void register_metrics_route(const RouteSite& site) {
  site.get("/metrics", [site](const http::Request& req, http::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto snap = site.context->snapshot();
    std::string body = render_metrics(*snap, site.options->exposition, site.self_stats());
    // OpenMetrics and gzip where the scraper asks (metrics_encoding.hpp).
    const auto encoding = negotiate_metrics(req.header("Accept"), req.header("Accept-Encoding"));
    if (encoding.openmetrics) body = to_openmetrics(body);
    res.set_header("Vary", "Accept, Accept-Encoding");
    if (encoding.gzip) {
      if (auto packed = gzip_compress(body)) {
        body = std::move(*packed);
        res.set_header("Content-Encoding", "gzip");
      }
    }
    *site.last_scrape_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.set_header("Cache-Control", "no-store");
    res.set_content(std::move(body),
                    std::string(encoding.openmetrics ? kOpenMetricsType : kPrometheusTextType));
  });
}

void register_dashboard_routes(const RouteSite& site) {
  for (const auto& asset : web_assets()) {
    site.get(std::string(asset.path), [&asset](const http::Request&, http::Response& res) {
      res.set_header("Cache-Control", "no-cache");
      res.set_content(std::string(asset.body.data(), asset.body.size()),
                      std::string(asset.content_type));
    });
  }
}

void register_routes(HttpServer& server) {
  HttpServer* self = &server;
  const RouteSite site{
      .get = [self](std::string path,
                    RouteHandler handler) { self->get(std::move(path), std::move(handler)); },
      .context = &self->context_,
      .options = &self->options_,
      .history = self->reader_.get(),
      .self_stats = [self] { return self->self_stats(); },
      .last_scrape_s = &self->last_scrape_s_,
      .kernel_answers = &self->kernel_answers_,
  };
  register_metrics_route(site);
  register_api_routes(site);
  register_slurm_routes(site);
  register_dashboard_routes(site);
}

}  // namespace gpulens::exposition

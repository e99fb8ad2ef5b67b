// SPDX-License-Identifier: Apache-2.0
#pragma once
// The routes of HttpServer, grouped by what they serve: /metrics and the
// dashboard's assets (routes.cpp), the JSON API (routes_api.cpp). register_routes,
// the server's friend, hands each group a RouteSite: how a route is added and the
// parts of the server its handlers read, and nothing else of it.
#include <atomic>
#include <functional>
#include <string>

#include "exposition/exposition.hpp"
#include "exposition/http_server.hpp"
#include "http/http_message.hpp"
#include "store/history_query.hpp"

namespace gpulens::exposition {

using RouteHandler = std::function<void(const http::Request&, http::Response&)>;

struct RouteSite {
  std::function<void(std::string path, RouteHandler handler)> get;
  const ApiContext* context = nullptr;
  const ServerOptions* options = nullptr;
  store::HistoryReader* history = nullptr;  // null: history disabled (--no-history)
  std::function<SelfStats()> self_stats;
  std::atomic<double>* last_scrape_s = nullptr;  // how long the last /metrics took
  std::atomic<int>* kernel_answers = nullptr;    // /api/v1/kernels answers being built
};

// Every route of the server (the API index's test holds the paths equal).
void register_routes(HttpServer& server);

void register_metrics_route(const RouteSite& site);
void register_api_routes(const RouteSite& site);
void register_dashboard_routes(const RouteSite& site);
void register_slurm_routes(const RouteSite& site);

}  // namespace gpulens::exposition

// SPDX-License-Identifier: Apache-2.0
// The handlers behind each path. Each one reads the published snapshot or the
// history store and answers; none changes anything on the GPU or the host.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "core/clock.hpp"
#include "core/duration.hpp"
#include "exposition/api_index.hpp"
#include "exposition/api_json.hpp"
#include "exposition/api_params.hpp"
#include "exposition/http_server.hpp"
#include "exposition/web_assets.hpp"
#include "http/http_message.hpp"
#include "store/store_writer.hpp"

namespace gpulens::server {
namespace {

// Longest range one history or timeline request may cover.
constexpr double kMaxRange = 100 * 86400.0;

void send_json(Response& res, const Json& body, int status = 200) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  // Process names are not always valid UTF-8: replace, never throw.
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                  "application/json");
}

void send_error(Response& res, int status, const std::string& message) {
  send_json(res, Json{{"error", message}}, status);
}

// Answers 400 and returns false, for parsers that stop at the first bad value.
bool reject(Response& res, const std::string& message) {
  send_error(res, 400, message);
  return false;
}

// The newest sample's time, or the wall clock before any sample: the "now" of
// relative times, so that a replay answers with its own last hour.
double data_now(const LiveSnapshot& snap) {
  return snap.t > 0 ? snap.t : unix_now();
}

// Reads from/to/gpu from the query; false after answering 400.
bool parse_range(const Request& req, Response& res, double now, double default_span, double& from,
                 double& to, std::vector<int>& gpus) {
  to = now;
  from = now - default_span;
  if (req.has_param("to")) {
    const auto t = parse_time(req.param("to"), now);
    if (!t) return reject(res, "to: " + t.error().message);
    to = *t;
  }
  if (req.has_param("from")) {
    const auto f = parse_time(req.param("from"), now);
    if (!f) return reject(res, "from: " + f.error().message);
    from = *f;
  } else {
    from = to - default_span;
  }
  if (!(from < to)) return reject(res, "from must be before to");
  if (to - from > kMaxRange) return reject(res, "the range may cover at most 100 days");
  if (req.has_param("gpu")) {
    const auto g = parse_gpu_list(req.param("gpu"));
    if (!g) return reject(res, "gpu: GPU indexes such as 0 or 0,1,3");
    gpus = *g;
  }
  return true;
}

// A step that gives about 300 points, rounded to a familiar length.
double default_step(double span) {
  static constexpr double kSteps[] = {1,   2,   5,    10,   15,   30,    60,    120,  300,
                                      600, 900, 1800, 3600, 7200, 21600, 43200, 86400};
  for (double s : kSteps) {
    if (span / s <= 300) return s;
  }
  return 86400;
}

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
  s.http = request_counts();
  s.last_scrape_s = last_scrape_s_.load();
  if (const auto usage = self_usage()) {
    s.rss_bytes = usage->first;
    s.cpu_seconds = usage->second;
  }
  if (const auto snap = context_.snapshot()) s.start_time = snap->started_at;
  return s;
}

void register_routes(HttpServer& server) {
  HttpServer* self = &server;

  self->get("/metrics", [self](const Request&, Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto snap = self->context_.snapshot();
    std::string body = render_metrics(*snap, self->options_.exposition, self->self_stats());
    self->last_scrape_s_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.set_header("Cache-Control", "no-store");
    res.set_content(std::move(body), "text/plain; version=0.0.4; charset=utf-8");
  });

  for (const char* index : {"/api/v1", "/api/v1/"}) {
    self->get(index, [](const Request&, Response& res) { send_json(res, api_index_json()); });
  }

  self->get("/api/v1/version",
            [](const Request&, Response& res) { send_json(res, version_json()); });

  self->get("/api/v1/health", [self](const Request&, Response& res) {
    const auto snap = self->context_.snapshot();
    const auto store = self->context_.store_status ? self->context_.store_status() : std::nullopt;
    const double now = unix_now();
    // 503 only when the agent cannot sample: a failing history is "degraded".
    send_json(res, health_json(*snap, store, now),
              health_status(*snap, store, now) == "failing" ? 503 : 200);
  });

  self->get("/api/v1/devices", [self](const Request&, Response& res) {
    send_json(res, devices_json(*self->context_.snapshot()));
  });

  self->get("/api/v1/latest", [self](const Request&, Response& res) {
    send_json(res, latest_json(*self->context_.snapshot(), self->options_.show_cmdline));
  });

  self->get("/api/v1/history", [self](const Request& req, Response& res) {
    if (!self->reader_) return send_error(res, 503, "history is disabled (--no-history)");
    const auto snap = self->context_.snapshot();
    store::HistoryQuery q;
    if (!parse_range(req, res, data_now(*snap), 3600, q.from, q.to, q.gpus)) return;
    q.step = default_step(q.to - q.from);
    if (req.has_param("step")) {
      const auto step = parse_duration(req.param("step"));
      if (!step || *step <= 0)
        return send_error(res, 400, "step: a duration such as 60, 15s or 1m");
      q.step = *step;
    }
    if (req.has_param("metrics")) {
      std::string bad;
      const auto metrics = parse_metric_list(req.param("metrics"), bad);
      if (!metrics) return send_error(res, 400, fmt::format("metrics: unknown key '{}'", bad));
      q.metrics = *metrics;
    }
    q.min_max = req.param("stats") == "all";
    auto result = self->reader_->history(q);
    if (!result) return send_error(res, 503, "history: " + result.error().message);
    send_json(res, history_json(*result));
  });

  self->get("/api/v1/timeline", [self](const Request& req, Response& res) {
    if (!self->reader_) return send_error(res, 503, "history is disabled (--no-history)");
    const auto snap = self->context_.snapshot();
    double from = 0, to = 0;
    std::vector<int> gpus;
    if (!parse_range(req, res, data_now(*snap), 3600, from, to, gpus)) return;
    auto result = self->reader_->timeline(from, to, gpus);
    if (!result) return send_error(res, 503, "history: " + result.error().message);
    Json body = timeline_json(*result);
    body["from"] = from;
    body["to"] = to;
    send_json(res, body);
  });

  self->get("/api/v1/alerts", [self](const Request& req, Response& res) {
    const auto snap = self->context_.snapshot();
    double from = 0, to = 0;
    std::vector<int> gpus;
    if (!parse_range(req, res, data_now(*snap), 86400, from, to, gpus)) return;
    int limit = 200;
    if (req.has_param("limit")) {
      const auto text = req.param("limit");
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
      if (ec != std::errc() || ptr != text.data() + text.size() || limit < 1 || limit > 1000)
        return send_error(res, 400, "limit: a number from 1 to 1000");
    }
    auto wanted = [&gpus](int gpu) {
      return gpus.empty() || std::find(gpus.begin(), gpus.end(), gpu) != gpus.end();
    };
    Json body;
    Json firing = Json::array();
    for (auto& f : firing_json(*snap)) {
      if (wanted(f["gpu"].get<int>())) firing.push_back(std::move(f));
    }
    body["firing"] = std::move(firing);
    Json events = Json::array();
    std::string source = "memory";
    if (self->reader_) {
      // to is inclusive here: the newest event has t == now.
      if (auto stored = self->reader_->alert_events(from, to + 1e-3, limit)) {
        source = "history";
        for (const auto& e : *stored) {
          if (wanted(e.gpu)) events.push_back(stored_event_json(e));
        }
      }
    }
    if (source == "memory") {
      const auto& recent = *snap->recent_events;
      for (auto it = recent.rbegin();
           it != recent.rend() && events.size() < static_cast<std::size_t>(limit); ++it) {
        if (it->t >= from && it->t <= to && wanted(it->gpu)) events.push_back(event_json(*it));
      }
    }
    body["events"] = std::move(events);
    body["events_source"] = source;
    send_json(res, body);
  });

  for (const auto& asset : web_assets()) {
    self->get(std::string(asset.path), [&asset](const Request&, Response& res) {
      res.set_header("Cache-Control", "no-cache");
      res.set_content(std::string(asset.body.data(), asset.body.size()),
                      std::string(asset.content_type));
    });
  }
}

}  // namespace gpulens::server

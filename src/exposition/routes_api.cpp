// SPDX-License-Identifier: Apache-2.0
// The JSON API under /api/v1/ (docs/api.md): each handler reads the published
// snapshot or the history store and answers; none changes anything.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/kernel_aggregate.hpp"
#include "core/clock.hpp"
#include "core/duration.hpp"
#include "exposition/answer_slot.hpp"
#include "exposition/api_index.hpp"
#include "exposition/api_json.hpp"
#include "exposition/api_params.hpp"
#include "exposition/routes.hpp"

namespace gpulens::exposition {
namespace {

// Longest range one history or timeline request may cover.
constexpr double kMaxRange = 100 * 86400.0;

void send_json(http::Response& res, const Json& body, int status = 200) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  // Process names are not always valid UTF-8: replace, never throw.
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                  "application/json");
}

void send_error(http::Response& res, int status, const std::string& message) {
  send_json(res, Json{{"error", message}}, status);
}

// Answers 400 and returns false, for parsers that stop at the first bad value.
bool reject(http::Response& res, const std::string& message) {
  send_error(res, 400, message);
  return false;
}

// The newest sample's time, or the wall clock before any sample: the "now" of
// relative times, so that a replay answers with its own last hour.
double data_now(const agent::LiveSnapshot& snap) {
  return snap.t > 0 ? snap.t : unix_now();
}

// Reads from/to/gpu from the query; false after answering 400.
bool parse_range(const http::Request& req, http::Response& res, double now, double default_span,
                 double& from, double& to, std::vector<int>& gpus) {
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

void answer_health(const RouteSite& site, http::Response& res) {
  const auto snap = site.context->snapshot();
  const auto store = site.context->store_status ? site.context->store_status() : std::nullopt;
  const double now = unix_now();
  Json body = health_json(*snap, store, now);
  body["kernels"] = kernel_intake_json(site.context->kernel_status ? site.context->kernel_status()
                                                                   : std::nullopt);
  // 503 only when the agent cannot sample: a failing history is "degraded".
  send_json(res, body, health_status(*snap, store, now) == "failing" ? 503 : 200);
}

// ?step= and ?metrics= of /api/v1/history; false after answering 400.
bool parse_history_query(const http::Request& req, http::Response& res, store::HistoryQuery& q) {
  q.step = default_step(q.to - q.from);
  if (req.has_param("step")) {
    const auto step = parse_duration(req.param("step"));
    if (!step || *step <= 0) return reject(res, "step: a duration such as 60, 15s or 1m");
    q.step = *step;
  }
  if (req.has_param("metrics")) {
    std::string bad;
    const auto metrics = parse_metric_list(req.param("metrics"), bad);
    if (!metrics) return reject(res, fmt::format("metrics: unknown key '{}'", bad));
    q.metrics = *metrics;
  }
  q.min_max = req.param("stats") == "all";
  return true;
}

void answer_history(const RouteSite& site, const http::Request& req, http::Response& res) {
  if (site.history == nullptr) return send_error(res, 503, "history is disabled (--no-history)");
  const auto snap = site.context->snapshot();
  store::HistoryQuery q;
  if (!parse_range(req, res, data_now(*snap), 3600, q.from, q.to, q.gpus)) return;
  if (!parse_history_query(req, res, q)) return;
  auto result = site.history->history(q);
  if (!result) return send_error(res, 503, "history: " + result.error().message);
  send_json(res, history_json(*result));
}

void answer_timeline(const RouteSite& site, const http::Request& req, http::Response& res) {
  if (site.history == nullptr) return send_error(res, 503, "history is disabled (--no-history)");
  const auto snap = site.context->snapshot();
  double from = 0, to = 0;
  std::vector<int> gpus;
  if (!parse_range(req, res, data_now(*snap), 3600, from, to, gpus)) return;
  auto result = site.history->timeline(from, to, gpus);
  if (!result) return send_error(res, 503, "history: " + result.error().message);
  Json body = timeline_json(*result);
  body["from"] = from;
  body["to"] = to;
  send_json(res, body);
}

// A count parameter such as ?limit= or ?top= (`fallback` without it, 1 to `most`);
// false after answering 400.
bool parse_count(const http::Request& req, http::Response& res, const char* name, int& value,
                 int fallback, int most) {
  value = fallback;
  if (!req.has_param(name)) return true;
  const auto text = req.param(name);
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 1 || value > most)
    return reject(res, fmt::format("{}: a number from 1 to {}", name, most));
  return true;
}

// ?limit= (`fallback` without it, at most `most`); false after answering 400.
bool parse_limit(const http::Request& req, http::Response& res, int& limit, int fallback = 200,
                 int most = 1000) {
  return parse_count(req, res, "limit", limit, fallback, most);
}

// ?pid=123,456 of /api/v1/kernels; false after answering 400.
bool parse_pids(const http::Request& req, http::Response& res, std::vector<std::uint32_t>& pids) {
  if (!req.has_param("pid")) return true;
  const std::string text = req.param("pid");
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    std::uint32_t pid = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + at, text.data() + comma, pid);
    if (ec != std::errc() || ptr != text.data() + comma || pid == 0 || pids.size() >= 64)
      return reject(res, "pid: up to 64 process IDs such as 1234 or 1234,5678");
    pids.push_back(pid);
    at = comma + 1;
  }
  return true;
}

// ?from=&to=&gpu=&pid= of /api/v1/kernels and /summary into `q`; false after
// answering (503 without the socket, 400 for a bad parameter).
bool parse_kernel_query(const RouteSite& site, const http::Request& req, http::Response& res,
                        agent::KernelQuery& q) {
  if (site.context->kernels == nullptr) {
    send_error(res, 503, "kernel summaries are not received (--kernels-socket)");
    return false;
  }
  // Windows are on the wall clock of the jobs that sent them, not the samples'.
  return parse_range(req, res, unix_now(), 3600, q.from, q.to, q.gpus) &&
         parse_pids(req, res, q.pids);
}

// Window answers built at once, at most: each is up to 8 MiB of windows made
// JSON on a worker. Past it a request is answered 429 at once, so that clients
// looping on them cannot take the workers and cores /metrics needs (issue 47:
// 8 such clients held scrapes at p99 2.9 s on 2 cores).
constexpr int kKernelAnswersAtOnce = 2;

// The windows of the jobs' kernel summaries (docs/kernels-agent.md) from memory.
void answer_kernels(const RouteSite& site, const http::Request& req, http::Response& res) {
  agent::KernelQuery q;
  if (!parse_kernel_query(site, req, res, q)) return;
  int limit = 0;
  if (!parse_limit(req, res, limit, 1000, 10000)) return;
  q.limit = static_cast<std::size_t>(limit);
  const AnswerSlot slot(site.kernel_answers, kKernelAnswersAtOnce);
  if (slot.busy()) {
    send_error(
        res, 429,
        fmt::format("{} kernel window answers are being built; retry", kKernelAnswersAtOnce));
    res.set_header("Retry-After", "1");
    return;
  }
  send_json(res, kernels_json(site.context->kernels->query(q), q.from, q.to));
}

// Every window of the range summed per GPU and process by the agent: no cap on
// the windows, a few kilobytes out (the dashboard's "Where the time went").
void answer_kernel_totals(const RouteSite& site, const http::Request& req, http::Response& res) {
  agent::KernelQuery q;
  if (!parse_kernel_query(site, req, res, q)) return;
  int top = 0;
  if (!parse_count(req, res, "top", top, static_cast<int>(agent::kKernelTotalTop),
                   static_cast<int>(agent::kKernelTotalMaxTop)))
    return;
  const auto processes =
      agent::total_kernels_by_process(*site.context->kernels, q, static_cast<std::size_t>(top));
  send_json(res, kernel_totals_json(processes, q.from, q.to, static_cast<std::size_t>(top)));
}

bool wanted(const std::vector<int>& gpus, int gpu) {
  return gpus.empty() || std::find(gpus.begin(), gpus.end(), gpu) != gpus.end();
}

// The alert events of [from, to] on the wanted GPUs: from the history when it
// answers, else from the agent's memory (newest first); with where they came from.
std::pair<Json, std::string> alert_events(const agent::LiveSnapshot& snap,
                                          store::HistoryReader* history, double from, double to,
                                          int limit, const std::vector<int>& gpus) {
  Json events = Json::array();
  if (history != nullptr) {
    // to is inclusive here: the newest event has t == now.
    if (auto stored = history->alert_events(from, to + 1e-3, limit)) {
      for (const auto& e : *stored) {
        if (wanted(gpus, e.gpu)) events.push_back(stored_event_json(e));
      }
      return {std::move(events), "history"};
    }
  }
  const auto& recent = *snap.recent_events;
  for (auto it = recent.rbegin();
       it != recent.rend() && events.size() < static_cast<std::size_t>(limit); ++it) {
    if (it->t >= from && it->t <= to && wanted(gpus, it->gpu)) events.push_back(event_json(*it));
  }
  return {std::move(events), "memory"};
}

// ?from (default a day before the newest sample), to, gpu and limit of the
// routes that list events of a range; false after answering 400.
struct ListQuery {
  double from = 0, to = 0;
  std::vector<int> gpus;
  int limit = 0;
};
bool parse_list_query(const agent::LiveSnapshot& snap, const http::Request& req,
                      http::Response& res, ListQuery& q) {
  return parse_range(req, res, data_now(snap), 86400, q.from, q.to, q.gpus) &&
         parse_limit(req, res, q.limit);
}

// The pods that held a GPU of this node by the kubelet's pod-resources API, from
// the history: idle or not, gone or not (docs/kubernetes.md).
void answer_kube_pods(const RouteSite& site, const http::Request& req, http::Response& res) {
  ListQuery q;
  if (!parse_list_query(*site.context->snapshot(), req, res, q)) return;
  if (site.history == nullptr) {
    return send_json(res, Json{{"error", "history is disabled (--no-history)"}}, 503);
  }
  // The GPUs are chosen in the query, so that `limit` counts rows of them.
  auto rows = site.history->pods(q.from, q.to, q.gpus, q.limit);
  if (!rows) return send_json(res, Json{{"error", rows.error().message}}, 503);
  Json pods = Json::array();
  for (const auto& u : *rows) {
    pods.push_back({{"namespace", u.namespace_name},
                    {"pod", u.pod},
                    {"gpu", u.gpu},
                    {"first", u.first_t},
                    {"last", u.last_t},
                    {"held_s", u.last_t - u.first_t}});
  }
  send_json(res, Json{{"from", q.from}, {"to", q.to}, {"pods", std::move(pods)}});
}

void answer_alerts(const RouteSite& site, const http::Request& req, http::Response& res) {
  const auto snap = site.context->snapshot();
  ListQuery q;
  if (!parse_list_query(*snap, req, res, q)) return;
  Json body;
  Json firing = Json::array();
  for (auto& f : firing_json(*snap)) {
    if (wanted(q.gpus, f["gpu"].get<int>())) firing.push_back(std::move(f));
  }
  body["firing"] = std::move(firing);
  auto [events, source] = alert_events(*snap, site.history, q.from, q.to, q.limit, q.gpus);
  body["events"] = std::move(events);
  body["events_source"] = source;
  send_json(res, body);
}

}  // namespace

void register_api_routes(const RouteSite& site) {
  for (const char* index : {"/api/v1", "/api/v1/"}) {
    site.get(index,
             [](const http::Request&, http::Response& res) { send_json(res, api_index_json()); });
  }
  site.get("/api/v1/version",
           [](const http::Request&, http::Response& res) { send_json(res, version_json()); });
  site.get("/api/v1/health",
           [site](const http::Request&, http::Response& res) { answer_health(site, res); });
  site.get("/api/v1/devices", [site](const http::Request&, http::Response& res) {
    send_json(res, devices_json(*site.context->snapshot()));
  });
  site.get("/api/v1/latest", [site](const http::Request&, http::Response& res) {
    send_json(res, latest_json(*site.context->snapshot(), site.options->show_cmdline));
  });
  site.get("/api/v1/history", [site](const http::Request& req, http::Response& res) {
    answer_history(site, req, res);
  });
  site.get("/api/v1/timeline", [site](const http::Request& req, http::Response& res) {
    answer_timeline(site, req, res);
  });
  site.get("/api/v1/alerts", [site](const http::Request& req, http::Response& res) {
    answer_alerts(site, req, res);
  });
  site.get("/api/v1/kubernetes/pods", [site](const http::Request& req, http::Response& res) {
    answer_kube_pods(site, req, res);
  });
  site.get("/api/v1/kernels", [site](const http::Request& req, http::Response& res) {
    answer_kernels(site, req, res);
  });
  site.get("/api/v1/kernels/summary", [site](const http::Request& req, http::Response& res) {
    answer_kernel_totals(site, req, res);
  });
}

}  // namespace gpulens::exposition

// SPDX-License-Identifier: Apache-2.0
#include "exposition/api_index.hpp"

namespace gpulens::exposition {

const std::vector<ApiRoute>& api_routes() {
  static const std::vector<ApiRoute> routes = {
      {"/api/v1/version", "", "name, version and API level of this agent"},
      {"/api/v1/health", "",
       "ok, degraded or failing, with the source's and the history's state (HTTP 503 when "
       "failing)"},
      {"/api/v1/devices", "", "host, driver and each GPU's static facts and unsupported metrics"},
      {"/api/v1/latest", "",
       "per GPU the newest sample, diagnosis state with evidence and fixes, processes, alerts"},
      {"/api/v1/history", "from,to,step,gpu,metrics,stats",
       "metric series from the history (raw or one-minute rollups)"},
      {"/api/v1/timeline", "from,to,gpu", "runs of one diagnosis state per GPU"},
      {"/api/v1/alerts", "from,to,gpu,limit", "firing alerts and alert events"},
      {"/api/v1/kubernetes/pods", "from,to,gpu,limit",
       "the pods that held each GPU by the kubelet's pod-resources API, from the history: "
       "first and last seen, running anything or not"},
      {"/api/v1/kernels", "from,to,gpu,pid,limit",
       "per process, GPU and trace window: the top kernels by GPU time, idle, collectives, "
       "copies (jobs that send kernel summaries)"},
      {"/api/v1/slurm/job", "id",
       "this node's part of one Slurm job from the history, as a gpu-trace (JSON lines) for "
       "`gpulens report --slurm-job ID --part`"},
      {"/api/v1/kernels/summary", "from,to,gpu,pid,top",
       "per process and GPU: every trace window of the range summed, kernels merged by name, "
       "the top by GPU time and the rest as other"},
  };
  return routes;
}

Json api_index_json() {
  Json j = version_json();
  j["docs"] =
      "docs/serve.md, JSON API. from/to: Unix seconds, RFC 3339, now, or before now (-15m, "
      "now-1h); step: a duration (60, 15s, 1m); gpu: 0,1";
  Json routes = Json::array();
  for (const auto& r : api_routes()) {
    Json params = Json::array();
    std::string_view rest = r.params;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      params.push_back(std::string(rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    routes.push_back({{"path", r.path}, {"params", std::move(params)}, {"returns", r.returns}});
  }
  j["routes"] = std::move(routes);
  return j;
}

}  // namespace gpulens::exposition

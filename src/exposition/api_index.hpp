// SPDX-License-Identifier: Apache-2.0
#pragma once
// GET /api/v1/: what the API offers, so that a person with curl (or a client
// library) can find the routes without the docs. One table, which the routes'
// test holds equal to the routes the server registers.
#include <string_view>
#include <vector>

#include "exposition/api_json.hpp"

namespace gpulens::exposition {

struct ApiRoute {
  std::string_view path;     // "/api/v1/history"
  std::string_view params;   // "from, to, step, gpu, metrics, stats"; empty: none
  std::string_view returns;  // one line
};

const std::vector<ApiRoute>& api_routes();

// {"name", "version", "api", "docs", "routes": [{"path", "params": [...], "returns"}]}
Json api_index_json();

}  // namespace gpulens::exposition

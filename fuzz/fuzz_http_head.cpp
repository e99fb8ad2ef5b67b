// SPDX-License-Identifier: Apache-2.0
// Fuzz target: what a client sends — the request head checks, Beast's parse of
// the head and our query and percent-decoding, the Authorization header, and
// the /api/v1/ query parameters.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/duration.hpp"
#include "exposition/api_params.hpp"
#include "http/basic_auth.hpp"
#include "http/http_connection.hpp"
#include "http/http_message.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpulens::http::check_head(text);
  if (const auto req = gpulens::http::parse_request_head(text)) {
    (void)req->header("Content-Length");
    (void)req->param("from");
  }
  (void)gpulens::http::parse_query(text);
  (void)gpulens::http::parse_basic_authorization(text);
  (void)gpulens::parse_duration(text);
  (void)gpulens::parse_time(text, 1732200000.0);
  (void)gpulens::exposition::parse_gpu_list(text);
  std::string bad;
  (void)gpulens::exposition::parse_metric_list(text, bad);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
#pragma once
// How /metrics answers, by what the scraper asks (issue 48): the OpenMetrics 1.0
// text when its Accept prefers it (Prometheus sends that by default), else the
// Prometheus text format 0.0.4; gzip when its Accept-Encoding allows it. The
// families themselves are written once, as Prometheus text (exposition.cpp);
// OpenMetrics is that text with the few things that differ rewritten here.
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace gpulens::exposition {

inline constexpr std::string_view kPrometheusTextType = "text/plain; version=0.0.4; charset=utf-8";
inline constexpr std::string_view kOpenMetricsType =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

struct MetricsEncoding {
  bool openmetrics = false;
  bool gzip = false;
};

// From the request's Accept and Accept-Encoding (RFC 9110 12.5.1, 12.5.3: q=0
// refuses; OpenMetrics wins a tie with text/plain, as the scraper listed it first).
MetricsEncoding negotiate_metrics(std::string_view accept, std::string_view accept_encoding);

// Prometheus text as OpenMetrics text: a counter family is named without its
// `_total` (its samples keep it), a counter whose samples lack `_total` is
// `unknown`, as is `untyped`; HELP escapes '"'; no blank line; `# EOF` at the end.
std::string to_openmetrics(std::string_view prometheus_text);

// A gzip member (RFC 1952) of `data`, from zlib.
Result<std::string> gzip_compress(std::string_view data);

}  // namespace gpulens::exposition

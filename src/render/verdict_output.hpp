// SPDX-License-Identifier: Apache-2.0
#pragma once
// The three forms of a verdict: text (what `gpulens run` prints on stderr),
// JSON (stable, documented in docs/report.md) and one self-contained HTML page.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "core/trace_reader.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::render {

std::string verdict_to_text(const verdict::Verdict& v);

inline constexpr int kReportJsonVersion = 2;  // 2: headline, job.outcome, steady_state
nlohmann::ordered_json verdict_to_json(const verdict::Verdict& v);

struct HtmlOptions {
  // Points per time-series line: long traces are averaged into this many buckets
  // so that the page stays small (a few hundred KiB) whatever the job's length.
  std::size_t max_points = 600;
  std::string title;  // defaults to the job's command or the host
};

// Needs the trace for the time series the verdict does not keep.
std::string verdict_to_html(const verdict::Verdict& v, const Trace& trace,
                            const HtmlOptions& options = {});

}  // namespace gpulens::render

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Fast, allocation-light JSON line formatting for samples: the recorder and
// `stream --format json` write one line per GPU per tick, so this is on the hot path.
#include <string>

#include "core/sample.hpp"

namespace gpulens {

// Appends `{"t": ..., "gpu": ..., <metric keys>..., "procs": [...]}` (no newline).
// Metric values are rounded to 3 decimals; integral metrics are written as integers.
void append_sample_json(std::string& out, const Sample& sample);

// Appends a number the way traces write them: rounded to decimals::kReading
// (core/json_number.hpp), then in its shortest form; null when not finite.
void append_number(std::string& out, double value);

// Appends a JSON string literal with escaping: the one JSON escaper for text
// written by hand (the hot path of trace lines); trees go through nlohmann.
// Bytes that are not valid UTF-8 (process names are bytes) become U+FFFD, so
// every line written is JSON that nlohmann, and so gpulens, reads back.
void append_json_string(std::string& out, std::string_view text);

}  // namespace gpulens

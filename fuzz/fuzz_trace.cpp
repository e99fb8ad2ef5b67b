// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a whole gpu-trace recording (header, samples, marks), strict and
// lenient, as `diagnose`, `report` and `serve --replay` read it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/json_format.hpp"
#include "core/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const bool lenient : {false, true}) {
    auto trace = gpulens::read_trace_string(text, "fuzz.jsonl", {.lenient = lenient});
    if (trace) {
      // What `stream` and the JSON outputs do with what was read.
      std::string line;
      for (const auto& s : trace->samples) {
        line.clear();
        gpulens::append_sample_json(line, s);
      }
      for (const auto& m : trace->marks) (void)gpulens::mark_to_json(m).dump();
      (void)gpulens::header_to_json(trace->header).dump();
    }
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// Fuzz target: one line of a workload's marks file (GPULENS_MARKS).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/marks_tail.hpp"
#include "core/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  if (auto mark = gpulens::parse_mark_line(line, 1.0)) (void)gpulens::mark_to_json(*mark).dump();
  return 0;
}

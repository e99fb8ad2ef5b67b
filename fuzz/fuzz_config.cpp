// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the diagnosis and alert config (TOML).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/duration.hpp"
#include "diagnosis/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpulens::diagnosis::parse_diagnosis_config(text, "fuzz.toml");
  (void)gpulens::parse_duration(text);
  return 0;
}

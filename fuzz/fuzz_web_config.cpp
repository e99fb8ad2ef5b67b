// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the exporter-toolkit web config (YAML subset).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http/web_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpulens::http::parse_web_config(text, "fuzz.yml", "/etc/gpulens");
  return 0;
}

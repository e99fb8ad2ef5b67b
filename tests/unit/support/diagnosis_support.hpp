// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builders shared by the analysis tests.
#include <cstdint>
#include <optional>
#include <string>

#include "core/sample.hpp"

namespace gpulens::testing {

// A process as the collector reports it (designated initializers would need
// every field under -Wmissing-field-initializers).
inline ProcessSample proc(std::uint32_t pid, std::string name = {},
                          std::optional<double> used_mib = {}, std::optional<double> cpu_pct = {},
                          std::optional<std::uint32_t> ppid = {}, std::string container = {}) {
  ProcessSample p;
  p.pid = pid;
  p.name = std::move(name);
  p.used_mib = used_mib;
  p.cpu_pct = cpu_pct;
  p.ppid = ppid;
  p.container = std::move(container);
  return p;
}

}  // namespace gpulens::testing

// SPDX-License-Identifier: Apache-2.0
#pragma once
// A real recording as a GPU without GPM would have written it (an A100, A10, L4,
// L40S or V100, or a container that NVML denies GPM): every GPM field taken out,
// the classic NVML ones (utilization, memory controller, memory, power, clocks)
// and the processes kept. Used by the tests of issue 28 and 44.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace gpulens::testing {

// The fields NVML's GPM gives (src/core/metric.cpp, source Gpm); the classic ones stay.
inline constexpr std::array kGpmFields = {
    "sm_active",    "sm_occupancy",   "tensor_active",  "dram_active",
    "fp64_active",  "fp32_active",    "fp16_active",    "hmma_active",
    "imma_active",  "dfma_active",    "int_active",     "pcie_tx_mibs",
    "pcie_rx_mibs", "nvlink_rx_mibs", "nvlink_tx_mibs", "graphics_active"};

// Writes the copy under the test's temporary directory and returns its path.
inline std::filesystem::path without_gpm(const std::filesystem::path& from) {
  // The pid keeps parallel test processes (and other checkouts' runs) apart; the
  // parent folder's name keeps the multi_gpu recordings (all multi.trace.jsonl) apart.
  const std::filesystem::path to =
      std::filesystem::path(::testing::TempDir()) /
      fmt::format("nogpm-{}-{}-{}", getpid(), from.parent_path().filename().string(),
                  from.filename().string());
  std::ifstream in(from);
  std::ofstream out(to);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      // The recorder's NaN (read as not measured): as null, the line parses and its
      // GPM fields go too. Passed through as it was, its other GPM fields stayed,
      // and one sample's SM activity made the funnel and the cost "measured".
      std::string nulls = line;
      for (const std::string bad : {"-Infinity", "Infinity", "NaN"}) {
        for (auto at = nulls.find(bad); at != std::string::npos; at = nulls.find(bad, at)) {
          nulls.replace(at, bad.size(), "null");
        }
      }
      j = nlohmann::json::parse(nulls, nullptr, false);
    }
    if (j.is_object()) {
      for (const char* key : kGpmFields) j.erase(key);
      line = j.dump();
    }
    out << line << '\n';
  }
  return to;
}

}  // namespace gpulens::testing

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The lines of this test process's kernel record, as the injection library's
// sender wrote them into `dir` (src/inject/sender.cpp).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpulens::inject::testing {

inline std::filesystem::path record_file(const std::filesystem::path& dir) {
  return dir / ("kernels-" + std::to_string(getpid()) + ".jsonl");
}

inline std::vector<nlohmann::json> record_lines(const std::filesystem::path& dir) {
  std::vector<nlohmann::json> out;
  std::ifstream in(record_file(dir));
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace gpulens::inject::testing

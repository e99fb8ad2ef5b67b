// SPDX-License-Identifier: Apache-2.0
#include "core/sample.hpp"

#include "core/json_number.hpp"

namespace gpulens {

void to_json(nlohmann::ordered_json& j, const MetricValues& values) {
  j = nlohmann::ordered_json::object();
  for (const auto& info : all_metrics()) {
    if (const auto v = values.get(info.id))
      j[std::string(info.key)] = json_number(*v, decimals::kReading);
  }
}

}  // namespace gpulens

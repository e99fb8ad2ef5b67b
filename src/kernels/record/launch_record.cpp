// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/launch_record.hpp"

#include <nlohmann/json.hpp>

namespace gpulens::kernels {

std::string launch_record_line(const LaunchRecord& r) {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const auto& k : r.kernels) {
    kernels.push_back(nlohmann::ordered_json{{"name", k.name}, {"launches", k.launches}});
  }
  const nlohmann::ordered_json j = {{launch_record::version_key, launch_record::version},
                                    {"pid", r.pid},
                                    {"comm", r.comm},
                                    {"first_ns", r.first_ns},
                                    {"written_ns", r.written_ns},
                                    {"final", r.final},
                                    {"kernel_launches", r.kernel_launches},
                                    {"graph_launches", r.graph_launches},
                                    {"graphs", r.graphs},
                                    {"unlisted_launches", r.unlisted_launches},
                                    {"kernels", std::move(kernels)}};
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace gpulens::kernels

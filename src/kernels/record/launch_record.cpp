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

std::string launch_datagram_of(LaunchRecord r) {
  auto unlist_from = [&r](std::size_t keep) {
    for (std::size_t i = keep; i < r.kernels.size(); ++i)
      r.unlisted_launches += r.kernels[i].launches;
    r.kernels.resize(keep);
  };
  if (r.kernels.size() > launch_datagram::max_kernels) unlist_from(launch_datagram::max_kernels);
  // Cut bytes, not characters: a split UTF-8 sequence is replaced when the line is written.
  for (auto& k : r.kernels) {
    if (k.name.size() > launch_datagram::max_name_bytes)
      k.name.resize(launch_datagram::max_name_bytes);
  }
  if (r.comm.size() > launch_record::max_comm_bytes) r.comm.resize(launch_record::max_comm_bytes);
  std::string line = launch_record_line(r);
  // 32 names of 256 bytes (at most 6 bytes each once escaped) may not fit: drop the least launched.
  while (line.size() > launch_datagram::max_bytes && !r.kernels.empty()) {
    unlist_from(r.kernels.size() - 1);
    line = launch_record_line(r);
  }
  return line;
}

}  // namespace gpulens::kernels

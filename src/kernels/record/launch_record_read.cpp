// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/launch_record_read.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "kernels/record/checked_json.hpp"

namespace gpulens::kernels {

std::variant<LaunchRecord, std::string> read_launch_record(const nlohmann::json& line) {
  if (!line.is_object()) return std::string("not a JSON object");
  // gpulens run's line for a file it could not take (cli/launches_setup.cpp).
  if (const auto* refused = Checked::find(line, "refused"); refused != nullptr) {
    return refused->is_string() ? refused->get<std::string>() : std::string("refused");
  }
  Checked c;
  const std::uint64_t v = c.count(line, "", launch_record::version_key);
  if (!c.problem.empty()) return c.problem;
  if (v != static_cast<std::uint64_t>(launch_record::version)) {
    return fmt::format(
        "a launch record of version {}, which this gpulens does not read (it reads "
        "version {})",
        v, launch_record::version);
  }
  LaunchRecord r;
  r.pid = c.u32(line, "", "pid");
  r.comm = c.text(line, "", "comm", "");
  // /proc/self/comm is at most 15 bytes; a longer one is the job's writing.
  if (r.comm.size() > launch_record::max_comm_bytes) r.comm.resize(launch_record::max_comm_bytes);
  r.first_ns = c.integer(line, "", "first_ns");
  r.written_ns = c.integer(line, "", "written_ns");
  if (const auto* f = Checked::find(line, "final"); f != nullptr) {
    if (f->is_boolean()) {
      r.final = f->get<bool>();
    } else {
      c.fail("final", "is not true or false");
    }
  }
  r.kernel_launches = c.count(line, "", "kernel_launches");
  r.graph_launches = c.count(line, "", "graph_launches");
  r.graphs = c.count(line, "", "graphs");
  r.unlisted_launches = c.count(line, "", "unlisted_launches");
  if (const auto* list = c.array(line, "", "kernels")) {
    if (list->size() > launch_record::max_kernels) {
      c.fail("kernels", fmt::format("has {} entries, more than the {} a record holds", list->size(),
                                    launch_record::max_kernels));
    } else {
      r.kernels.reserve(list->size());
      for (std::size_t i = 0; i < list->size() && c.problem.empty(); ++i) {
        const auto path = Checked::item("kernels", i);
        if (!c.object((*list)[i], path)) break;
        KernelLaunches k;
        k.name = c.text((*list)[i], path, "name", "?");
        if (k.name.size() > launch_record::max_name_bytes) {
          k.name.resize(launch_record::max_name_bytes);
        }
        k.launches = c.count((*list)[i], path, "launches");
        r.kernels.push_back(std::move(k));
      }
    }
  }
  if (!c.problem.empty()) return c.problem;
  std::uint64_t listed = 0;
  for (const auto& k : r.kernels) {
    if (k.launches > UINT64_MAX - listed) return std::string("its counts overflow 64 bits");
    listed += k.launches;
  }
  if (listed > r.kernel_launches || r.kernel_launches - listed != r.unlisted_launches) {
    return fmt::format(
        "its counts do not add up: {} listed and {} unlisted launches against {} in all", listed,
        r.unlisted_launches, r.kernel_launches);
  }
  if (r.written_ns < r.first_ns) return std::string("it was written before its first launch");
  return r;
}

}  // namespace gpulens::kernels

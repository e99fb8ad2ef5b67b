// SPDX-License-Identifier: Apache-2.0
#include "inject/agent_link.hpp"

namespace gpulens::inject {

void AgentLink::on_chunk(const kernels::NamesRecord& names, const kernels::ChunkRecord& chunk,
                         std::int64_t base_unix_ns) {
  builder_.add_names(names);
  kernels::WindowSummary s = builder_.summarise(chunk, base_unix_ns);
  s.summaries_dropped = dropped_;
  if (sender_.send(kernels::encode_summary(std::move(s)))) {
    ++sent_;
  } else {
    ++dropped_;
  }
}

}  // namespace gpulens::inject

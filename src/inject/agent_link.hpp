// SPDX-License-Identifier: Apache-2.0
#pragma once
// The job's side of the node agent (docs/kernels-agent.md): each closed window's
// summary (kernels/record/summary_datagram.hpp) goes as one datagram to gpulens-serve's
// unix socket. The job never waits: the send does not block, and an agent that is
// absent, slow or full costs a dropped summary, counted here (the record's end
// line and the next summary carry the count).
//
// Pure C++ with no CUPTI: libgpulens_kernels.so compiles it in (sender.cpp calls
// on_chunk from its window thread), and the tests drive it directly.
#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/record/agent_socket.hpp"
#include "kernels/record/chunk_record.hpp"
#include "kernels/record/summary_datagram.hpp"

namespace gpulens::inject {

using kernels::DatagramSender;

class AgentLink {
 public:
  explicit AgentLink(std::string socket_path) : sender_(std::move(socket_path)) {}

  // A chunk is out: its names (the `names` lines before it, possibly empty) join
  // those known, and its summary is sent. `base_unix_ns`: the record's clock base.
  void on_chunk(const kernels::NamesRecord& names, const kernels::ChunkRecord& chunk,
                std::int64_t base_unix_ns);

  std::uint64_t sent() const { return sent_; }
  std::uint64_t dropped() const { return dropped_; }
  int last_errno() const { return sender_.last_errno(); }

 private:
  kernels::SummaryBuilder builder_;
  DatagramSender sender_;
  std::uint64_t sent_ = 0, dropped_ = 0;
};

}  // namespace gpulens::inject

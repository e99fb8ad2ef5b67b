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

#include "kernels/record/chunk_record.hpp"
#include "kernels/record/summary_datagram.hpp"

namespace gpulens::inject {

// Where gpulens-serve listens unless told otherwise (its --kernels-socket).
inline constexpr const char* kDefaultAgentSocket = "/run/gpulens/kernels.sock";

// $GPULENS_KERNELS_AGENT: unset or empty, none (""); "1" or "agent", the default
// socket; an absolute path, that socket. Anything else is none, and `why` says so.
std::string agent_socket_from_env(const char* value, std::string& why);

// One non-blocking datagram socket to one path. Each send names the path again,
// so a restarted agent (a new socket at the same path) is found without a reconnect.
class DatagramSender {
 public:
  explicit DatagramSender(std::string path);
  ~DatagramSender();
  DatagramSender(const DatagramSender&) = delete;
  DatagramSender& operator=(const DatagramSender&) = delete;

  // True when the kernel took the datagram; never blocks. A full queue
  // (EAGAIN), no socket (ENOENT) or nobody bound (ECONNREFUSED) is false.
  bool send(std::string_view datagram);
  int last_errno() const { return last_errno_; }

 private:
  std::string path_;
  int fd_ = -1;
  int last_errno_ = 0;
};

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

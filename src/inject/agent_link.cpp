// SPDX-License-Identifier: Apache-2.0
#include "inject/agent_link.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpulens::inject {

std::string agent_socket_from_env(const char* value, std::string& why) {
  why.clear();
  if (value == nullptr || *value == '\0') return {};
  const std::string v = value;
  if (v == "1" || v == "agent") return kDefaultAgentSocket;
  if (v.front() != '/') {
    why = "GPULENS_KERNELS_AGENT '" + v + "' is not 1, agent or an absolute socket path";
    return {};
  }
  if (v.size() >= sizeof(sockaddr_un{}.sun_path)) {
    why = "GPULENS_KERNELS_AGENT '" + v + "' is longer than a unix socket path may be";
    return {};
  }
  return v;
}

DatagramSender::DatagramSender(std::string path) : path_(std::move(path)) {}

DatagramSender::~DatagramSender() {
  if (fd_ >= 0) close(fd_);
}

bool DatagramSender::send(std::string_view datagram) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.empty() || path_.size() >= sizeof addr.sun_path) {
    last_errno_ = ENAMETOOLONG;
    return false;
  }
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  if (fd_ < 0) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      last_errno_ = errno;
      return false;
    }
  }
  for (;;) {
    const ssize_t n = sendto(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                             reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    if (n >= 0) return true;
    if (errno == EINTR) continue;
    last_errno_ = errno;  // EAGAIN, ENOENT, ECONNREFUSED, EACCES, EMSGSIZE: dropped
    return false;
  }
}

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

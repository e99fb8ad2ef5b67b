// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/agent_socket.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpulens::kernels {

std::string agent_socket_from_env(std::string_view variable, const char* value, std::string& why) {
  why.clear();
  if (value == nullptr || *value == '\0') return {};
  const std::string v = value;
  if (v == "1" || v == "agent") return kDefaultAgentSocket;
  if (v.front() != '/') {
    why = std::string(variable) + " '" + v + "' is not 1, agent or an absolute socket path";
    return {};
  }
  if (v.size() >= sizeof(sockaddr_un{}.sun_path)) {
    why = std::string(variable) + " '" + v + "' is longer than a unix socket path may be";
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

}  // namespace gpulens::kernels

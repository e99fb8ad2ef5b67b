// SPDX-License-Identifier: Apache-2.0
#pragma once
// The wire from a job's process to the node agent (docs/kernels-agent.md): where
// gpulens-serve's socket is, and one datagram to it that never waits. Both libraries
// that go into jobs send through it: the kernel view's window summaries
// (libgpulens_kernels.so, $GPULENS_KERNELS_AGENT) and the launch counts
// (libgpulens_launches.so, $GPULENS_LAUNCHES_AGENT). The standard library and POSIX
// only, so that either compiles it in.
#include <string>
#include <string_view>

namespace gpulens::kernels {

// Where gpulens-serve listens unless told otherwise (its --kernels-socket).
inline constexpr const char* kDefaultAgentSocket = "/run/gpulens/kernels.sock";

// The setting of `variable` (its name, for `why`), as read from the environment:
// unset or empty, none (""); "1" or "agent", the default socket; an absolute path,
// that socket. Anything else is none, and `why` says so.
std::string agent_socket_from_env(std::string_view variable, const char* value, std::string& why);

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
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int last_errno_ = 0;
};

}  // namespace gpulens::kernels

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Signals for `gpulens top`, sent only to the process that was listed: its start
// time (/proc/PID/stat field 22) and name are compared when the question is asked
// and again just before sending, and the signal goes through a pidfd opened in
// between, so that a PID reused meanwhile is refused instead of hit. Only a live
// source gets a signaller: a replay's PIDs are a recording's, not this machine's.
#include <cstdint>
#include <memory>
#include <string>

#include "core/result.hpp"
#include "sources/tick_source.hpp"
#include "tui/view_state.hpp"

namespace gpulens::cli {

// Who a PID is on this machine now.
struct ProcessIdentity {
  std::uint64_t start_ticks = 0;  // clock ticks since boot
  std::string comm;               // the short name
};

// Reads PROCFS_ROOT/PID/stat; an Error when the PID has no such file (it exited).
Result<ProcessIdentity> read_process_identity(const std::string& procfs_root, std::uint32_t pid);

// The system calls that check and send, one seam so that tests see what would be
// sent without sending it. Each returns 0 or an errno value (open: fd, or -errno).
class SignalKernel {
 public:
  virtual ~SignalKernel() = default;
  virtual int may_signal(std::uint32_t pid) = 0;  // kill(pid, 0)
  virtual int pidfd_open(std::uint32_t pid) = 0;  // fd >= 0, or -errno (-ENOSYS: no pidfds)
  virtual int pidfd_send(int fd, int signal) = 0;
  virtual int kill(std::uint32_t pid, int signal) = 0;  // where the kernel has no pidfds
  virtual void close(int fd) = 0;
};

// The real system calls (pidfd_open(2) and pidfd_send_signal(2), Linux 5.3; kill(2)
// on older kernels, where the checks remain but a reuse in between cannot be ruled out).
std::shared_ptr<SignalKernel> system_signal_kernel();

// nullptr unless `source` is live: a replay gets no way to signal at all.
std::unique_ptr<tui::ProcessSignaller> make_process_signaller(
    const sources::TickSource& source, std::string procfs_root,
    std::shared_ptr<SignalKernel> kernel = system_signal_kernel());

}  // namespace gpulens::cli

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The job's stderr, relayed to ours so that `gpulens run` can read what the job
// said as it died (jobs/oom_message.*) without the job seeing any difference:
// when our stderr is a terminal, the job's is a pseudo-terminal of the same
// settings and window size (isatty is true, colours stay on, tqdm keeps its
// width), kept in step with ours; otherwise a pipe. Bytes pass unchanged and at
// once (no line buffering): a thread copies each chunk as it is read, then hands
// it to the callback. A job's grandchild may keep the stream open after the job
// exits: the relay is "caught up" once nothing is left to read, and gpulens need
// not wait for the end of the stream.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace gpulens::jobs {

class StderrRelay {
 public:
  // A pseudo-terminal when our stderr is a terminal, else a pipe; nullptr, and
  // `why` set, when neither can be had (the job then inherits our stderr).
  static std::shared_ptr<StderrRelay> open(std::function<void(std::string_view)> on_bytes,
                                           std::string& why);
  // The descriptor the job gets as its stderr (close-on-exec: dup2 it).
  int child_end() const { return child_fd_; }
  bool terminal() const { return pty_; }
  // In the parent once the job runs: our copy of its end closed, the copying begun.
  void start(std::shared_ptr<StderrRelay> self);
  // The job never ran: both ends closed, nothing copied.
  void abandon();
  // The job was reaped: waits until the relay has read all there was (or the
  // stream ended), at most until `deadline`, and says how the stream was read
  // (StderrScan::state's words: "read" or "incomplete").
  std::string finish(std::chrono::steady_clock::time_point deadline);

  StderrRelay() = default;
  StderrRelay(const StderrRelay&) = delete;
  StderrRelay& operator=(const StderrRelay&) = delete;
  ~StderrRelay();

 private:
  void run();
  void sync_window_size();
  bool copy_out(const char* p, std::size_t n);

  int read_fd_ = -1;   // the pseudo-terminal's master, or the pipe's read end
  int child_fd_ = -1;  // its slave, or the pipe's write end
  bool pty_ = false;
  bool writing_ = true;  // false once our stderr refused a write (not EPIPE)
  std::function<void(std::string_view)> on_bytes_;
  std::atomic<bool> exited_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool ended_ = false;      // guarded: end of stream, or gave up
  bool caught_up_ = false;  // guarded: nothing left to read after the job exited
  bool gave_up_ = false;    // guarded: stopped reading before the end
  unsigned short rows_ = 0, cols_ = 0;
};

}  // namespace gpulens::jobs

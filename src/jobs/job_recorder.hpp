// SPDX-License-Identifier: Apache-2.0
#pragma once
// Records a job: pulls ticks from a source (live GPUs or a replay) on its own
// thread, merges the job's marks (its GPULENS_MARKS file and step marks from its
// stdout) and writes everything to a gpu-trace file, noting which GPUs the job's
// processes appear on. Without a source it still writes the job's marks, so the
// trace says that nothing was measured and why.
#include <sys/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/job_marks.hpp"
#include "core/result.hpp"
#include "jobs/child_process.hpp"
#include "sources/tick_source.hpp"

namespace gpulens::jobs {

// Marks from other threads (the job's stdout reader) on their way to the trace.
class MarkInbox {
 public:
  void push(Mark mark) {
    std::lock_guard lock(mutex_);
    marks_.push_back(std::move(mark));
  }
  std::vector<Mark> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(marks_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<Mark> marks_;
};

struct RecorderOptions {
  std::string trace_path;
  std::string marks_path;  // the file the job appends marks to; empty = none
  std::string procfs = "/proc";
  std::string host;  // for the header when there is no source
  // Called on the recorder thread about every `live_every_s` with a status line.
  std::function<void(const std::string&)> on_live_status;
  double live_every_s = 5;
  std::optional<double> peak_total_tflops;  // for MFU in the live line
  // Live recordings keep these marks' t; replays stamp them with the replay's
  // newest time, the job's "now" (marks from the marks file keep a "t" of their own).
  std::shared_ptr<MarkInbox> inbox;
  // A replay read as fast as possible (--speed 0) is recorded whole, however
  // short the job: tests get the same trace every time.
  bool drain_replay = false;
};

struct JobStart {
  std::string command;
  pid_t pid = 0;
  double wall_t = 0;  // when it started (Unix seconds)
};

class JobRecorder {
 public:
  // Opens the trace. `source` may be null: nothing is sampled.
  static Result<std::unique_ptr<JobRecorder>> open(std::unique_ptr<sources::TickSource> source,
                                                   RecorderOptions options);
  // The job runs: start recording (once).
  void begin(JobStart job);
  ~JobRecorder();
  JobRecorder(const JobRecorder&) = delete;
  JobRecorder& operator=(const JobRecorder&) = delete;

  // The job ended: stop sampling, write what is left and the job_end mark, close
  // the trace. `gpus` non-empty: the user chose them (--gpus). `stderr_scan`:
  // what was read on the job's stderr, kept in the job_end mark.
  Result<JobRecord> finish(const ChildExit& exit, const std::vector<int>& gpus,
                           const std::string& not_measured, const StderrScan& stderr_scan = {});

 private:
  struct Impl;
  explicit JobRecorder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpulens::jobs

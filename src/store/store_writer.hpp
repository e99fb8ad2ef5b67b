// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes history off the sampling thread: a slow or failing disk never delays
// a tick or an HTTP answer. Batches are committed about once a second (so a
// crash loses at most that), rollups and retention follow, and failures (full
// disk, read-only directory) are reported once, retried, and never fatal: the
// agent keeps serving live data without history.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/history_store.hpp"
#include "store/pod_uses.hpp"

namespace gpulens::store {

struct StoreStatus {
  std::string path;
  bool open = false;                  // the file is open for writing
  bool healthy = false;               // open, and the last write succeeded
  std::string error;                  // the current problem, empty when healthy
  std::optional<double> error_since;  // Unix time the problem began
  std::uint64_t samples_written = 0;
  std::uint64_t events_written = 0;
  std::uint64_t write_errors = 0;
  std::uint64_t dropped_samples = 0;  // lost because the backlog overflowed
  std::size_t backlog = 0;            // samples waiting to be written
  std::uint64_t kernel_windows_written = 0;
  // Kernel windows lost: the queue was full when they came, or the disk failed
  // for longer than the queue holds.
  std::uint64_t dropped_kernel_windows = 0;
  std::optional<double> last_commit;  // Unix time
  double last_commit_s = 0;           // how long the last commit took
  StoreStats stats;
};

struct WriterOptions {
  double flush_interval_s = 1.0;
  double retry_interval_s = 10.0;  // reopen / rewrite after a failure
  double maintenance_interval_s = 60.0;
  // Backlog kept while the disk fails; the oldest samples go first past it.
  std::size_t max_backlog = 20000;
  // Kernel windows waiting: at one window per GPU every 20 s, a 8-GPU node fills
  // it in about 80 minutes of failing disk; a burst of whole-job chunks (one per
  // process every 2 s) in 8.
  std::size_t max_kernel_backlog = 2000;
};

class StoreWriter {
 public:
  using Log = std::function<void(bool error, const std::string& message)>;
  StoreWriter(StoreOptions options, WriterOptions writer, Log log);
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Opens the file (or records why not) and starts the writing thread.
  void start(const TraceHeader& header);
  // `slurm`: the Slurm jobs on the GPUs at these ticks (SlurmJobUses::add_samples);
  // `pods`: the pods holding them by the kubelet's word (PodUses::add_samples).
  void push(std::vector<StoredSample> samples, std::vector<diagnosis::AlertEvent> events,
            const SlurmJobUses& slurm = {}, const PodUses& pods = {});
  // Queues one kernel window without waiting on SQLite (the receiver's thread
  // calls it); false when the queue is full: the window is dropped and counted.
  bool push_kernel_window(kernels::KernelWindow window);
  // Writes what is pending, closes the minute, checkpoints the WAL and stops.
  void stop();
  StoreStatus status() const;
  const StoreOptions& options() const { return options_; }

 private:
  void loop();
  bool try_open(double now);
  void write_pending(std::vector<StoredSample>& samples, std::vector<diagnosis::AlertEvent>& events,
                     SlurmJobUses& slurm, PodUses& pods,
                     std::vector<kernels::KernelWindow>& kernel_windows, double now);
  void maintain(double now, bool final);
  void fail(const std::string& message, double now);
  void recover();

  StoreOptions options_;
  WriterOptions writer_;
  Log log_;
  TraceHeader header_;
  std::optional<HistoryStore> store_;  // touched by the writing thread only

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<StoredSample> pending_;
  std::vector<diagnosis::AlertEvent> pending_events_;
  SlurmJobUses pending_slurm_;  // one per job, step and GPU: bounded by the jobs
  PodUses pending_pods_;        // one per pod and GPU: bounded by the pods
  std::vector<kernels::KernelWindow> pending_kernels_;  // at most max_kernel_backlog
  bool quit_ = false;
  StoreStatus status_;
  std::thread thread_;
  double next_open_ = 0;
  double next_maintenance_ = 0;
  double maintained_data_t_ = 0;
  double last_error_log_ = 0;
};

}  // namespace gpulens::store

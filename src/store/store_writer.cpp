// SPDX-License-Identifier: Apache-2.0
#include "store/store_writer.hpp"

#include <fmt/format.h>

#include <chrono>

#include "core/clock.hpp"

namespace gpulens::store {

namespace {
// While a failure lasts, it is logged again this often (with what was lost).
constexpr double kErrorReminder = 300.0;
// A batch this large wakes the writer before the flush interval: fast replays.
constexpr std::size_t kEarlyFlush = 4096;
// Slurm job rows kept waiting while the disk fails: far more jobs than run on
// one node between two retries; past it the longest unseen go first.
constexpr std::size_t kMaxPendingSlurm = 4096;
constexpr std::size_t kMaxPendingPods = 4096;
}  // namespace

StoreWriter::StoreWriter(StoreOptions options, WriterOptions writer, Log log)
    : options_(std::move(options)), writer_(writer), log_(std::move(log)) {
  status_.path = options_.path;
}

StoreWriter::~StoreWriter() {
  stop();
}

void StoreWriter::start(const TraceHeader& header) {
  header_ = header;
  try_open(unix_now());
  thread_ = std::thread([this] { loop(); });
}

bool StoreWriter::try_open(double now) {
  auto store = HistoryStore::open(options_);
  if (!store) {
    fail(store.error().message, now);
    next_open_ = now + writer_.retry_interval_s;
    return false;
  }
  store_.emplace(std::move(*store));
  if (auto s = store_->write_devices(header_); !s) {
    fail(s.error().message, now);
    return true;
  }
  {
    // Read before taking the lock: push() (the agent's and the kernel receiver's
    // threads) never waits on SQLite or the file system.
    auto stats = store_->stats();
    std::lock_guard lock(mutex_);
    status_.open = true;
    status_.stats = std::move(stats);
  }
  recover();
  log_(false, fmt::format("history: writing to {} (raw samples kept {:g} h, minutes {:g} days, "
                          "at most {} MiB)",
                          options_.path, options_.raw_retention_s / 3600,
                          options_.rollup_retention_s / 86400, options_.max_bytes >> 20));
  return true;
}

void StoreWriter::push(std::vector<StoredSample> samples, std::vector<diagnosis::AlertEvent> events,
                       const SlurmJobUses& slurm, const PodUses& pods) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (quit_) return;
    for (auto& s : samples) pending_.push_back(std::move(s));
    for (auto& e : events) pending_events_.push_back(std::move(e));
    if (!slurm.empty()) {
      pending_slurm_.merge(slurm);
      pending_slurm_.trim(kMaxPendingSlurm);
    }
    if (!pods.empty()) {
      pending_pods_.merge(pods);
      pending_pods_.trim(kMaxPendingPods);
    }
    if (pending_.size() > writer_.max_backlog) {
      const auto excess = pending_.size() - writer_.max_backlog;
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(excess));
      status_.dropped_samples += excess;
    }
    status_.backlog = pending_.size();
    wake = pending_.size() >= kEarlyFlush;
  }
  if (wake) cv_.notify_one();
}

bool StoreWriter::push_kernel_window(kernels::KernelWindow window) {
  std::lock_guard lock(mutex_);
  if (quit_ || pending_kernels_.size() >= writer_.max_kernel_backlog) {
    ++status_.dropped_kernel_windows;
    return false;
  }
  pending_kernels_.push_back(std::move(window));
  return true;
}

void StoreWriter::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    cv_.wait_for(lock, std::chrono::duration<double>(writer_.flush_interval_s),
                 [&] { return quit_ || pending_.size() >= kEarlyFlush; });
    const bool quitting = quit_;
    std::vector<StoredSample> samples;
    std::vector<diagnosis::AlertEvent> events;
    SlurmJobUses slurm;
    PodUses pods;
    std::vector<kernels::KernelWindow> kernel_windows;
    samples.swap(pending_);
    kernel_windows.swap(pending_kernels_);
    events.swap(pending_events_);
    std::swap(slurm, pending_slurm_);
    std::swap(pods, pending_pods_);
    lock.unlock();

    const double now = unix_now();
    if (!store_ && now >= next_open_) try_open(now);
    if (store_) {
      write_pending(samples, events, slurm, pods, kernel_windows, now);
      maintain(now, quitting);
    }
    lock.lock();
    if (!slurm.empty()) {  // not written: merged into what came since
      slurm.merge(pending_slurm_);
      pending_slurm_ = std::move(slurm);
      pending_slurm_.trim(kMaxPendingSlurm);
    }
    if (!pods.empty()) {  // not written: merged into what came since
      pods.merge(pending_pods_);
      pending_pods_ = std::move(pods);
      pending_pods_.trim(kMaxPendingPods);
    }
    if (!kernel_windows.empty()) {  // not written: in front of newer ones, the oldest dropped
      kernel_windows.insert(kernel_windows.end(), std::make_move_iterator(pending_kernels_.begin()),
                            std::make_move_iterator(pending_kernels_.end()));
      pending_kernels_ = std::move(kernel_windows);
      if (pending_kernels_.size() > writer_.max_kernel_backlog) {
        const auto excess = pending_kernels_.size() - writer_.max_kernel_backlog;
        pending_kernels_.erase(pending_kernels_.begin(),
                               pending_kernels_.begin() + static_cast<std::ptrdiff_t>(excess));
        status_.dropped_kernel_windows += excess;
      }
    }
    // What could not be written goes back in front of newer samples, bounded.
    if (!samples.empty() || !events.empty()) {
      samples.insert(samples.end(), std::make_move_iterator(pending_.begin()),
                     std::make_move_iterator(pending_.end()));
      pending_ = std::move(samples);
      events.insert(events.end(), std::make_move_iterator(pending_events_.begin()),
                    std::make_move_iterator(pending_events_.end()));
      pending_events_ = std::move(events);
      if (pending_.size() > writer_.max_backlog) {
        const auto excess = pending_.size() - writer_.max_backlog;
        pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(excess));
        status_.dropped_samples += excess;
      }
      if (pending_events_.size() > 1000) pending_events_.clear();
    }
    status_.backlog = pending_.size();
    if (quitting) break;
  }
}

void StoreWriter::write_pending(std::vector<StoredSample>& samples,
                                std::vector<diagnosis::AlertEvent>& events, SlurmJobUses& slurm,
                                PodUses& pods, std::vector<kernels::KernelWindow>& kernel_windows,
                                double now) {
  if (samples.empty() && events.empty() && slurm.empty() && pods.empty() && kernel_windows.empty())
    return;
  if (!status_.healthy && now < next_open_) return;  // wait for the retry time
  const auto t0 = std::chrono::steady_clock::now();
  const auto slurm_rows = slurm.rows();
  // Windows that added a row: a skipped or replaced one is not counted as written.
  std::size_t kept = 0;
  auto s = store_->write(samples, events, slurm_rows, kernel_windows, &kept);
  if (!s && store_->db().last_error().kind == DbFailure::Full) {
    // Our own size bound may be what is full: make room and try once more.
    (void)store_->enforce_limits(/*make_room=*/true);
    s = store_->write(samples, events, slurm_rows, kernel_windows, &kept);
  }
  if (!s) {
    fail(fmt::format("history: {}", s.error().message), now);
    next_open_ = now + writer_.retry_interval_s;
    std::lock_guard lock(mutex_);
    ++status_.write_errors;
    return;
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    std::lock_guard lock(mutex_);
    status_.samples_written += samples.size();
    status_.events_written += events.size();
    status_.kernel_windows_written += kept;
    status_.last_commit = now;
    status_.last_commit_s = took;
  }
  samples.clear();
  events.clear();
  slurm.clear();
  kernel_windows.clear();
  // The pods' rows in a transaction of their own: when it fails they stay pending
  // (merged into the next batch), and the samples written are not written again.
  if (store_->write_pods(pods.rows())) pods.clear();
  recover();
}

void StoreWriter::maintain(double now, bool final) {
  if (!status_.healthy) return;
  auto s = store_->roll_up_closed(final);
  // Retention runs every minute of wall time, and every ten minutes of data
  // time so that a fast replay stays within its bounds too.
  const double data_t = store_->stats().newest_t.value_or(0);
  if (s && (final || now >= next_maintenance_ || data_t - maintained_data_t_ >= 600)) {
    s = store_->enforce_limits();
    next_maintenance_ = now + writer_.maintenance_interval_s;
    maintained_data_t_ = data_t;
    if (s && final) s = store_->checkpoint();
    auto stats = store_->stats();  // outside the lock, as in try_open()
    std::lock_guard lock(mutex_);
    status_.stats = std::move(stats);
  }
  if (!s)
    fail(fmt::format("history: maintenance of {} failed: {}", options_.path, s.error().message),
         now);
}

void StoreWriter::fail(const std::string& message, double now) {
  bool log = false;
  std::uint64_t dropped = 0;
  {
    std::lock_guard lock(mutex_);
    const bool changed = status_.error != message;
    status_.healthy = false;
    if (!status_.error_since) status_.error_since = now;
    status_.error = message;
    dropped = status_.dropped_samples;
    log = changed || now - last_error_log_ >= kErrorReminder;
    if (log) last_error_log_ = now;
  }
  if (log) {
    log_(true, fmt::format("{}; live data is still served, history is paused{}", message,
                           dropped > 0 ? fmt::format(" ({} samples lost so far)", dropped) : ""));
  }
}

void StoreWriter::recover() {
  bool was_failing = false;
  {
    std::lock_guard lock(mutex_);
    was_failing = status_.error_since.has_value();
    status_.healthy = true;
    status_.error.clear();
    status_.error_since.reset();
  }
  if (was_failing && status_.open) {
    log_(false, fmt::format("history: writing to {} again", options_.path));
  }
}

void StoreWriter::stop() {
  {
    std::lock_guard lock(mutex_);
    if (quit_) return;
    quit_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  store_.reset();
}

StoreStatus StoreWriter::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#include "sampler/sampler.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <string>

#include "core/input_limits.hpp"
#include "core/value_ranges.hpp"

namespace gpulens::sampler {

// One per device. Shared with its thread so that a thread stuck in a driver call
// can be left behind (detached) without touching freed memory.
struct Sampler::Worker {
  std::size_t slot = 0;
  std::shared_ptr<sources::GpuCollector> collector;
  std::mutex mutex;
  std::condition_variable cv;
  bool requested = false;  // a sample is wanted
  bool busy = false;       // the thread is inside collector->sample()
  bool done = false;       // a result is waiting to be taken
  bool quit = false;
  Sample result;
  sources::CollectCost cost;
  std::thread thread;

  static void loop(const std::shared_ptr<Worker>& self) {
    // Named so that per-thread CPU (top -H, /proc/PID/task) tells ours from NVML's.
    const std::string name = "gpulens-gpu" + std::to_string(self->slot);
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    std::unique_lock lock(self->mutex);
    while (true) {
      self->cv.wait(lock, [&] { return self->requested || self->quit; });
      if (self->quit) return;
      self->requested = false;
      self->busy = true;
      Sample sample;
      sources::CollectCost cost;
      lock.unlock();
      self->collector->sample(self->slot, sample, cost);
      lock.lock();
      self->busy = false;
      self->done = true;
      self->result = std::move(sample);
      self->cost = cost;
      self->cv.notify_all();
    }
  }
};

Sampler::Sampler(std::shared_ptr<sources::GpuCollector> collector, SamplerOptions options)
    : collector_(std::move(collector)), options_(std::move(options)), host_(options_.host) {
  char hostname[256] = {};
  if (gethostname(hostname, sizeof hostname - 1) == 0) header_.host = hostname;
  header_.driver = collector_->driver_version();
  header_.interval_s = options_.interval_s;
  header_.devices = collector_->devices();
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 0) header_.cpu_count = static_cast<int>(cpus);
  if (!options_.marks_path.empty()) marks_.emplace(options_.marks_path);
  if (!options_.slurm_allocations.dir.empty()) {
    allocations_.emplace(options_.slurm_allocations, sources::allocation_devices(header_));
  }
  if (!options_.kube_allocations.socket.empty()) {
    kube_allocations_ = std::make_unique<sources::kube::KubeAllocationReader>(
        options_.kube_allocations, sources::allocation_devices(header_));
  }
  for (std::size_t slot = 0; slot < header_.devices.size(); ++slot) {
    auto worker = std::make_shared<Worker>();
    worker->slot = slot;
    worker->collector = collector_;
    worker->thread = std::thread(&Worker::loop, worker);
    workers_.push_back(std::move(worker));
  }
  host_.sample(
      sources::HostReadings::CpuOnly);  // prime the CPU deltas: the first tick has a figure
  start_ = std::chrono::steady_clock::now();
}

Sampler::~Sampler() {
  for (auto& w : workers_) {
    bool stuck = false;
    {
      std::lock_guard lock(w->mutex);
      w->quit = true;
      stuck = w->busy;
    }
    w->cv.notify_all();
    // A thread inside a hung driver call cannot be joined; it owns shared state.
    if (stuck)
      w->thread.detach();
    else
      w->thread.join();
  }
}

void Sampler::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  cv_.notify_all();
}

bool Sampler::sleep_until(std::chrono::steady_clock::time_point due) {
  std::unique_lock lock(mutex_);
  cv_.wait_until(lock, due, [&] { return stopped_; });
  return !stopped_;
}

std::optional<sources::SamplerStats> Sampler::stats() const {
  sources::SamplerStats stats;
  {
    std::lock_guard lock(mutex_);
    stats = stats_;
  }
  stats.profiler = collector_->profiler_status();
  return stats;
}

// Asks worker `w` for a sample unless it is still inside an earlier call; false
// then.
bool Sampler::request(Worker& w) {
  std::lock_guard lock(w.mutex);
  if (w.busy || w.requested) return false;
  w.done = false;
  w.requested = true;
  w.cv.notify_all();
  return true;
}

// The GPUs are asked in turn, one answering before the next is asked, not all
// at once: the driver serialises GPM's calls across devices (a round on 2 H200s
// took 4.36 ms at once against 4.12 ms in turn), and the threads waiting on its
// lock only add CPU (2.62 against 2.02 ms per GPU and tick on 4 H200s; the
// figures are in docs/nvml-facts.md). Each GPU
// keeps its own thread so that one stuck in the driver holds the others up for
// its turn only (the tick's timeout shared out among the GPUs); the GPUs after it
// are then asked without waiting for it.
void Sampler::collect_devices(Tick& tick) {
  using namespace std::chrono;
  const double timeout_s =
      options_.gpu_timeout_s.value_or(std::max(0.05, options_.interval_s * 0.9));
  const auto start = steady_clock::now();
  const auto deadline = start + duration_cast<steady_clock::duration>(duration<double>(timeout_s));
  const auto turn = duration_cast<steady_clock::duration>(
      duration<double>(timeout_s / static_cast<double>(std::max<std::size_t>(1, workers_.size()))));
  for (auto& w : workers_) {
    // A worker still inside an earlier call was not asked, and is not waited for.
    if (!request(*w)) continue;
    std::unique_lock lock(w->mutex);
    w->cv.wait_until(lock, std::min(deadline, steady_clock::now() + turn), [&] { return w->done; });
  }
  sources::CollectCost total;
  std::uint64_t answered = 0, timeouts = 0, out_of_range = 0;
  for (std::size_t slot = 0; slot < workers_.size(); ++slot) {
    auto& w = *workers_[slot];
    std::unique_lock lock(w.mutex);
    w.cv.wait_until(lock, deadline, [&] { return w.done; });
    Sample sample;
    if (w.done) {
      w.done = false;
      sample = std::move(w.result);
      // A driver's glitch (a GPM ratio past 100 %, a counter read as 2^64 - 1)
      // is dropped here, before any mean, chart or history row sees it.
      out_of_range += drop_out_of_range(sample.values);
      total += w.cost;
      ++answered;
    } else {
      // Report the device as unresponsive this tick; its worker is not asked again
      // until the stuck call returns.
      sample.extra["x_error"] =
          fmt::format("no answer from the driver within {:.0f} ms", timeout_s * 1000);
      ++timeouts;
    }
    sample.gpu = header_.devices[slot].index;
    tick.samples.push_back(std::move(sample));
  }
  std::lock_guard lock(mutex_);
  stats_.cost += total;
  stats_.gpu_samples += answered;
  stats_.timeouts += timeouts;
  stats_.out_of_range += out_of_range;
}

std::vector<std::string> Sampler::warnings() const {
  std::lock_guard lock(mutex_);
  if (stats_.out_of_range == 0) return {};
  return {
      fmt::format("{} reading(s) from the driver out of range dropped (the ranges are in "
                  "docs/trace-format.md)",
                  stats_.out_of_range)};
}

void Sampler::add_host_readings(Tick& tick) {
  const double cpu0 = thread_cpu_seconds();
  const sources::HostSnapshot host = host_.sample(sources::HostReadings::CpuOnly);
  const double cpu1 = thread_cpu_seconds();
  const std::shared_ptr<const sources::AllocationScan> held =
      allocations_ ? allocations_->read(tick.t) : nullptr;
  const std::shared_ptr<const sources::AllocationScan> pods =
      kube_allocations_ ? kube_allocations_->read() : nullptr;
  for (auto& sample : tick.samples) {
    sample.t = tick.t;
    sample.values.set(Metric::HostCpuPct, host.cpu_pct);
    if (sample.procs) {
      host_.enrich(*sample.procs, tick.t);
      sources::confirm_slurm_jobs(*sample.procs, held.get());
    }
    // A directory that could not be trusted or read, or a kubelet that does not
    // answer, names no owner: the samples then say nothing of allocation, and the
    // jobs come from processes.
    for (const auto* scan : {held.get(), pods.get()}) {
      if (scan == nullptr || !scan->usable) continue;
      if (!sample.allocations) sample.allocations.emplace();
      const auto it = scan->by_gpu.find(sample.gpu);
      if (it == scan->by_gpu.end()) continue;
      for (const auto& a : it->second) {
        if (sample.allocations->size() >= kMaxAllocationsPerSample) break;
        sample.allocations->push_back(a);
      }
    }
  }
  const double cpu2 = thread_cpu_seconds();
  std::lock_guard lock(mutex_);
  stats_.host_s += cpu1 - cpu0;
  stats_.cost.procfs_s += cpu2 - cpu1;
  stats_.slurm_problems = host_.slurm_problems();
  stats_.allocations = held;
  stats_.kube_allocations = pods;
}

void Sampler::add_events_and_marks(Tick& tick) {
  const double cpu0 = thread_cpu_seconds();
  for (const auto& event : collector_->poll_events()) {
    Mark mark;
    mark.t = event.t > 0 ? event.t : tick.t;
    mark.fields["gpu"] = event.gpu;
    if (event.kind == sources::DeviceEvent::Kind::Xid) {
      mark.name = "xid";
      mark.fields["xid"] = event.xid;
    } else {
      mark.name = "gpu_lost";
    }
    if (!event.detail.empty()) mark.fields["detail"] = event.detail;
    tick.marks.push_back(std::move(mark));
  }
  if (marks_) {
    for (auto& mark : marks_->poll(tick.t)) tick.marks.push_back(std::move(mark));
  }
  const double cpu1 = thread_cpu_seconds();
  std::lock_guard lock(mutex_);
  stats_.events_s += cpu1 - cpu0;
}

Result<std::optional<Tick>> Sampler::next() {
  using namespace std::chrono;
  const auto interval =
      duration_cast<steady_clock::duration>(duration<double>(options_.interval_s));
  // Ticks sit on a fixed grid from the start; an overrun skips slots rather than
  // shifting every later tick.
  auto due = start_ + interval * static_cast<long>(slot_);
  const auto now = steady_clock::now();
  if (due < now - interval) {
    const auto behind = static_cast<std::uint64_t>((now - due) / interval);
    slot_ += behind;
    due += interval * static_cast<long>(behind);
    std::lock_guard lock(mutex_);
    stats_.missed_ticks += behind;
  }
  ++slot_;
  if (!sleep_until(due)) return std::optional<Tick>{};
  Tick tick;
  collect_devices(tick);
  tick.t = unix_now();
  add_host_readings(tick);
  add_events_and_marks(tick);
  {
    std::lock_guard lock(mutex_);
    ++stats_.ticks;
  }
  return std::optional<Tick>{std::move(tick)};
}

}  // namespace gpulens::sampler

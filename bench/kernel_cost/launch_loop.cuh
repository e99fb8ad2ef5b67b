// SPDX-License-Identifier: Apache-2.0
// The empty-kernel launch loop that pc_sampling.cu and launch_cost.cu time: THREADS
// threads, each on a stream of its own, launch an empty kernel in batches of 128 and
// time the host's side of each batch (a stream synchronisation follows, untimed). A
// slot's figure is the median microseconds per launch over its batches, averaged over
// threads.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#define CU_OK(x)                                                    \
  do {                                                              \
    cudaError_t e_ = (x);                                           \
    if (e_ != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                 \
    }                                                               \
  } while (0)

namespace launch_loop {

__global__ void empty_kernel() {}

using Clock = std::chrono::steady_clock;

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);

// The launching threads, waiting between slots.
class Launcher {
 public:
  // `at_thread_exit` runs on each launching thread as it ends (thread-local tallies).
  explicit Launcher(int threads, std::function<void()> at_thread_exit = {})
      : per_thread_(threads, 0), at_thread_exit_(std::move(at_thread_exit)) {
    for (int i = 0; i < threads; ++i) pool_.emplace_back([this, i] { run(i); });
  }
  ~Launcher() { stop(); }

  // Launches through `fn` on `f` (the driver API) instead of the <<<>>> syntax.
  void launch_by(LaunchFn fn, CUfunction f) {
    by_driver_ = fn;
    fn_ = f;
  }

  // One slot of `ms` milliseconds on every thread: microseconds per launch.
  double slot(int ms) {
    done_ = 0;
    end_ = Clock::now() + std::chrono::milliseconds(ms);
    go_.fetch_add(1);
    while (done_.load() < static_cast<int>(pool_.size())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    double sum = 0;
    for (double v : per_thread_) sum += v;
    return sum / static_cast<double>(pool_.size());
  }

  // Joins the threads; returns the launches they made.
  unsigned long long stop() {
    quit_ = true;
    for (auto& t : pool_) t.join();
    pool_.clear();
    return made_.load();
  }

 private:
  void run(int id) {
    cudaStream_t s;
    CU_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    long seen = 0;
    unsigned long long n = 0;
    while (true) {
      while (go_.load() == seen && !quit_.load()) std::this_thread::yield();
      if (quit_.load()) break;
      seen = go_.load();
      std::vector<double> batches;
      while (Clock::now() < end_) {
        const auto t0 = Clock::now();
        if (LaunchFn f = by_driver_) {
          for (int i = 0; i < 128; ++i) f(fn_, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr);
        } else {
          for (int i = 0; i < 128; ++i) empty_kernel<<<1, 1, 0, s>>>();
        }
        const auto t1 = Clock::now();
        n += 128;
        batches.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 128);
        CU_OK(cudaStreamSynchronize(s));
      }
      per_thread_[id] = median(batches);
      done_.fetch_add(1);
    }
    CU_OK(cudaStreamDestroy(s));
    made_ += n;
    if (at_thread_exit_) at_thread_exit_();
  }

  std::vector<double> per_thread_;
  std::function<void()> at_thread_exit_;
  std::vector<std::thread> pool_;
  std::atomic<LaunchFn> by_driver_{nullptr};
  CUfunction fn_ = nullptr;
  std::atomic<long> go_{0};
  std::atomic<int> done_{0};
  std::atomic<bool> quit_{false};
  std::atomic<unsigned long long> made_{0};
  Clock::time_point end_;
};

}  // namespace launch_loop

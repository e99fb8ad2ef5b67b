// SPDX-License-Identifier: Apache-2.0
// What CUPTI costs a kernel launch in each state (cupti_toggle.cpp), measured in
// short alternating slots of one process: each cycle visits the states in a new
// random order, so drift (clocks, other tenants) falls on all of them alike and
// each cycle gives one paired difference per state.
//
// THREADS launch threads, each with a stream of its own, launch an empty kernel
// in batches of 128 and time the host's side of each batch (the launches only; a
// stream synchronisation follows, untimed, so the queue never fills and the time
// is the host's, not the GPU's). A slot's figure is the median microseconds per
// launch over its batches, averaged over threads. Between slots the threads park
// on a condition variable outside CUDA while the main thread changes CUPTI's state.
//
// Usage: launch_slots THREADS CYCLES SLOT_MS STATES [SEED]
//   STATES: letters of d (detached), q (quiet), t (traced); "n" alone measures
//   slots with CUPTI never touched (for the never-vs-finalised comparison across
//   processes), "f" alone slots after one traced burst and a finalise.
// Prints one JSON line per measured slot, then one line of transition costs.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern "C" {
double ct_goto(int state);
long ct_records();
int ct_state();
const char* ct_error();
}

namespace {

__global__ void empty_kernel() {}

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Slots {
  std::mutex m;
  std::condition_variable cv;
  long generation = 0;  // a new slot to run
  bool quit = false;
  Clock::time_point end;
  int done = 0;  // threads that finished the current slot
  std::vector<double> per_thread;
};

void launcher(Slots& s, int index) {
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  long seen = 0;
  std::vector<double> batches;
  for (;;) {
    Clock::time_point end;
    {
      std::unique_lock lock(s.m);
      s.cv.wait(lock, [&] { return s.quit || s.generation != seen; });
      if (s.quit) break;
      seen = s.generation;
      end = s.end;
    }
    batches.clear();
    while (Clock::now() < end) {
      const auto t0 = Clock::now();
      for (int i = 0; i < 128; ++i) empty_kernel<<<1, 1, 0, stream>>>();
      const auto t1 = Clock::now();
      cudaStreamSynchronize(stream);
      batches.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 128);
    }
    std::lock_guard lock(s.m);
    s.per_thread[index] = median(batches);
    ++s.done;
    s.cv.notify_all();
  }
  cudaStreamDestroy(stream);
}

// Runs one slot of `ms` on every thread; the mean over threads of their medians.
double run_slot(Slots& s, int threads, double ms) {
  std::unique_lock lock(s.m);
  s.done = 0;
  s.end = Clock::now() + std::chrono::microseconds(static_cast<long>(ms * 1000));
  ++s.generation;
  s.cv.notify_all();
  s.cv.wait(lock, [&] { return s.done == threads; });
  double sum = 0;
  for (double v : s.per_thread) sum += v;
  return sum / threads;
}

double go(int state) {
  const double us = ct_goto(state);
  if (us < 0) {
    std::fprintf(stderr, "launch_slots: %s\n", ct_error());
    std::exit(3);
  }
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: launch_slots THREADS CYCLES SLOT_MS STATES [SEED]\n");
    return 2;
  }
  const int threads = std::atoi(argv[1]);
  const int cycles = std::atoi(argv[2]);
  const double slot_ms = std::atof(argv[3]);
  const std::string states = argv[4];
  std::mt19937 rng(argc > 5 ? std::atoi(argv[5]) : 1);
  cudaFree(nullptr);
  Slots s;
  s.per_thread.assign(threads, 0);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(launcher, std::ref(s), i);
  run_slot(s, threads, 300);  // warm: clocks up, first launches paid

  // Moves' costs: a finalise (to d) and an attach (d to t), in microseconds.
  double finalize_us = 0, attach_us = 0;
  int finalizes = 0, attaches = 0;
  auto move = [&](int to) {
    const int from = ct_state();
    const double us = go(to);
    if (to == 0 && from != 0) {
      finalize_us += us;
      ++finalizes;
    } else if (to == 2 && from == 0) {
      attach_us += us;
      ++attaches;
    }
  };
  const bool single = states == "n" || states == "f";
  if (states == "f") {  // one traced burst, then finalised for good
    move(2);
    run_slot(s, threads, 50);
    move(0);
  }
  std::string order = single ? states.substr(0, 1) : states;
  for (int c = 0; c < cycles; ++c) {
    std::shuffle(order.begin(), order.end(), rng);
    for (char st : order) {
      if (st == 'd') {
        move(0);
      } else if (st == 't') {
        move(2);
      } else if (st == 'q') {
        if (ct_state() != 1) {
          move(2);
          run_slot(s, threads, 20);  // the kinds were on for real launches
          move(1);
        }
      }
      run_slot(s, threads, 20);  // settle after the move, unmeasured
      const double us = run_slot(s, threads, slot_ms);
      std::printf(
          "{\"bench\":\"launch\",\"threads\":%d,\"cycle\":%d,\"state\":\"%c\",\"us\":%.5f}\n",
          threads, c, st, us);
    }
  }
  {
    std::lock_guard lock(s.m);
    s.quit = true;
    s.cv.notify_all();
  }
  for (auto& t : pool) t.join();
  std::printf(
      "{\"bench\":\"launch_moves\",\"threads\":%d,\"finalize_us\":%.1f,\"finalizes\":%d,"
      "\"attach_us\":%.1f,\"attaches\":%d,\"records\":%ld}\n",
      threads, finalizes ? finalize_us / finalizes : 0.0, finalizes,
      attaches ? attach_us / attaches : 0.0, attaches, ct_records());
  return 0;
}

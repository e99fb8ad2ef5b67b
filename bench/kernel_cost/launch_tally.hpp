// SPDX-License-Identifier: Apache-2.0
// The part of launch_hook.cpp that every launch runs, without CUDA, so that
// bench/launch_tally_bench.cpp can time it alone: a thread's table of launch counts
// keyed by the launched function, and the countdown that picks the launches to time.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace launch_tally {

// One function's tally on one thread. Written by its thread only and read by a dump
// from another, hence relaxed atomics (plain moves on x86-64) and a key published
// after the name.
struct Entry {
  std::atomic<const void*> key{nullptr};  // CUfunction, CUkernel or CUgraphExec
  bool graph = false;
  std::string name;
  std::atomic<uint64_t> launches{0};
  std::atomic<uint64_t> samples{0};
  std::atomic<uint64_t> sampled_ns{0};
  // The samples taken while the stream was still busy with earlier work.
  std::atomic<uint64_t> busy_samples{0};
  std::atomic<uint64_t> busy_ns{0};
  // The samples whose start is put on the host's clock (launch_hook.cpp, reap).
  std::atomic<uint64_t> mapped_samples{0};
  std::atomic<uint64_t> mapped_ns{0};
};

inline void bump(std::atomic<uint64_t>& c, uint64_t by = 1) {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

// Open addressing on the key's address; a key whose probe run of 64 is full is not
// told apart (find returns null and the caller counts it as "other").
template <size_t Slots>
class Table {
  static_assert((Slots & (Slots - 1)) == 0, "a power of two");

 public:
  // The key's entry, made on first sight with `namer(key, graph)` as its name.
  template <class Namer>
  Entry* find(const void* key, bool graph, Namer&& namer) {
    size_t i = slot_of(key);
    for (size_t probe = 0; probe < 64; ++probe, i = (i + 1) & (Slots - 1)) {
      Entry& e = slots_[i];
      const void* k = e.key.load(std::memory_order_relaxed);
      if (k == key) return &e;
      if (k == nullptr) {
        e.name = namer(key, graph);
        e.graph = graph;
        e.key.store(key, std::memory_order_release);
        return &e;
      }
    }
    return nullptr;
  }

  std::array<Entry, Slots>& slots() { return slots_; }

 private:
  static size_t slot_of(const void* key) {
    constexpr int kBits = std::countr_zero(Slots);
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ULL >>
                               (64 - kBits));
  }
  std::array<Entry, Slots> slots_;
};

// Picks launches to time: the gaps between them are geometric with mean `mean`, so
// that a training step's fixed sequence of kernels cannot alias with the sampling.
class Countdown {
 public:
  explicit Countdown(uint64_t seed) : rng_(seed | 1) {}

  // True when this launch is to be timed; `mean` <= 0 times none.
  bool tick(long mean) {
    if (mean <= 0 || --left_ > 0) return false;
    left_ = next(mean);
    return true;
  }

 private:
  long next(long mean) {
    rng_ ^= rng_ >> 12;  // xorshift64*
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    const double u =
        static_cast<double>((rng_ * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
    const double p = 1.0 / static_cast<double>(mean);
    return 1 + static_cast<long>(std::log1p(-u) / std::log1p(-p));
  }
  long left_ = 0;
  uint64_t rng_;
};

}  // namespace launch_tally

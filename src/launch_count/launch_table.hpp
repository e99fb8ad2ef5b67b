// SPDX-License-Identifier: Apache-2.0
#pragma once
// One thread's launch counts, keyed by what was launched: the part of every launch's
// path, without the driver, so that bench/launch_count_bench.cpp can time it alone.
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpulens::launch_count {

// One kernel's (or graph's) count on one thread. Written by its thread only and read
// by the writer thread, hence relaxed atomics (plain moves on x86-64) and a key
// published after the name.
struct Entry {
  std::atomic<const void*> key{nullptr};  // CUfunction, CUkernel or CUgraphExec
  bool graph = false;
  std::string name;  // the driver's (mangled) name; empty for a graph
  std::atomic<std::uint64_t> launches{0};
};

inline void bump(std::atomic<std::uint64_t>& c) {
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// Open addressing on the key's address. A key whose probe run is full is not told
// apart: find() returns null and the caller counts the launch as unlisted.
template <std::size_t Slots>
class LaunchTable {
  static_assert(std::has_single_bit(Slots), "a power of two");

 public:
  static constexpr std::size_t kProbes = 64;

  // The key's entry, made on first sight with `namer(key, graph)` as its name.
  template <class Namer>
  Entry* find(const void* key, bool graph, Namer&& namer) {
    std::size_t i = slot_of(key);
    for (std::size_t probe = 0; probe < kProbes; ++probe, i = (i + 1) & (Slots - 1)) {
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
  static std::size_t slot_of(const void* key) {
    constexpr int kBits = std::countr_zero(Slots);
    // Fibonacci hashing of the address; its low bits are alignment.
    return static_cast<std::size_t>(
        (reinterpret_cast<std::uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ULL >> (64 - kBits));
  }
  std::array<Entry, Slots> slots_;
};

}  // namespace gpulens::launch_count

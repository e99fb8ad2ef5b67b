// SPDX-License-Identifier: Apache-2.0
#include "launch_count/counts.hpp"

#include <pthread.h>

#include <mutex>
#include <set>
#include <vector>

#include "launch_count/driver_lookup.hpp"
#include "launch_count/launch_table.hpp"

namespace gpulens::launch_count {
namespace {

// 2048 kernels a thread can tell apart, about 110 KiB a thread that launches; a
// PyTorch job launches a few hundred distinct kernels.
constexpr std::size_t kSlots = 2048;

struct Tally {
  LaunchTable<kSlots> table;
  std::atomic<std::uint64_t> untold{0};
};

// Never destroyed: the writer reads the tables at exit, after static destructors
// may have run.
std::mutex& tallies_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::vector<Tally*>& tallies() {
  static auto* v = new std::vector<Tally*>;
  return *v;
}
// Tallies of threads that ended, for the next new thread: a job whose pools start
// and end threads all day holds as many tallies as it ever ran threads at once.
// Counts carry over and the writer sums by name, so a reused tally loses nothing.
std::vector<Tally*>& free_tallies() {
  static auto* v = new std::vector<Tally*>;
  return *v;
}

// The thread's table, found on every launch: initial-exec TLS is one load at a fixed
// offset from the thread pointer, where a thread_local object with a destructor in a
// shared library costs a call to __tls_get_addr and a guard. A preloaded library's
// static TLS is set up at start; the 8 bytes also fit the surplus glibc keeps for a
// library dlopen'ed later (gpulens' own check that the library loads).
__attribute__((tls_model("initial-exec"))) thread_local Tally* t_tally = nullptr;

// At a thread's end (the key's destructor), its table goes back for the next thread.
void release_tally(void* t) {
  std::lock_guard lock(tallies_mutex());
  free_tallies().push_back(static_cast<Tally*>(t));
}

pthread_key_t tally_key() {
  static const pthread_key_t key = [] {
    pthread_key_t k{};
    pthread_key_create(&k, release_tally);
    return k;
  }();
  return key;
}

// The thread's first launch: a table, reused or new, and the key that hands it back.
__attribute__((noinline)) Tally& new_tally() {
  Tally* t = nullptr;
  {
    std::lock_guard lock(tallies_mutex());
    if (!free_tallies().empty()) {
      t = free_tallies().back();
      free_tallies().pop_back();
    } else {
      t = new Tally;
      tallies().push_back(t);
    }
  }
  pthread_setspecific(tally_key(), t);
  t_tally = t;
  return *t;
}

inline Tally& tally() {
  Tally* t = t_tally;
  return t != nullptr ? *t : new_tally();
}

std::string name_of(const void* key, bool graph) {
  if (graph) return {};
  // cudart (12 and later) launches CUkernel handles, which cuFuncGetName refuses.
  const Driver& d = driver();
  const char* raw = nullptr;
  void* k = const_cast<void*>(key);
  if (d.func_name != nullptr && d.func_name(&raw, k) == cu::kSuccess && raw != nullptr) return raw;
  raw = nullptr;
  if (d.kernel_name != nullptr && d.kernel_name(&raw, k) == cu::kSuccess && raw != nullptr) {
    return raw;
  }
  return "?";
}

}  // namespace

void count_launch(const void* key, bool graph) {
  Tally& t = tally();
  Entry* e = t.table.find(key, graph, name_of);
  bump(e != nullptr ? e->launches : t.untold);
}

Totals totals() {
  Totals out;
  std::set<const void*> graphs;
  std::lock_guard lock(tallies_mutex());
  for (Tally* t : tallies()) {
    for (const Entry& e : t->table.slots()) {
      const void* key = e.key.load(std::memory_order_acquire);
      if (key == nullptr) continue;
      const std::uint64_t n = e.launches.load(std::memory_order_relaxed);
      if (e.graph) {
        out.graph_launches += n;
        if (n > 0) graphs.insert(key);
      } else if (n > 0) {
        out.kernels[e.name] += n;
        out.kernel_launches += n;
      }
    }
    const std::uint64_t untold = t->untold.load(std::memory_order_relaxed);
    out.untold += untold;
    out.kernel_launches += untold;
  }
  out.graphs = graphs.size();
  return out;
}

void counts_before_fork() {
  tallies_mutex().lock();
}

void counts_after_fork_in_parent() {
  tallies_mutex().unlock();
}

void counts_after_fork_in_child() {
  for (Tally* t : tallies()) {
    for (Entry& e : t->table.slots()) e.launches.store(0, std::memory_order_relaxed);
    t->untold.store(0, std::memory_order_relaxed);
  }
  tallies_mutex().unlock();
}

}  // namespace gpulens::launch_count

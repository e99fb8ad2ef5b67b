// SPDX-License-Identifier: Apache-2.0
#pragma once
// The jobs' kernel summaries as Prometheus counters (docs/kernels-agent.md,
// "Prometheus series"): per GPU and pod, seconds of traced GPU time by kernel,
// accumulated from every window received, so rate() works and a scrape never
// misses a window. Bounded whatever the jobs send:
//
// - At most `top` kernel names per GPU have a series of their own (all pods of
//   the GPU together); the time of every other kernel goes to kernel="other".
// - A name without a series takes a free slot at once. When none is free, it
//   takes the slot of the named series with the least recent time (time decayed
//   with a half-life of `half_life_s`) once that series has held its slot for
//   `retire_after_s` and the newcomer's recent time is larger: each slot changes
//   hands at most once per `retire_after_s`.
// - A named series whose kernel got no time for `retire_after_s` is dropped; so
//   are a pod's series when no window came from it for that long.
// - At most `max_pods` pods per GPU; windows of further pods count without pod
//   labels. Names waiting for a slot are remembered up to a bound, the least
//   recent forgotten first: a flood of distinct names costs a bounded map.
//
// Launch counts (add_launches: the jobs' libgpulens_launches.so, $GPULENS_LAUNCHES_AGENT)
// are kept beside the time by the same rules, in slots of their own: launches per GPU
// and pod, and per kernel for the `top` kernels with the most recent launches.
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "agent/kernel_store.hpp"
#include "sources/host/kube_pods.hpp"

namespace gpulens::agent {

inline constexpr std::size_t kKernelSeriesTop = 10;

struct KernelSeriesOptions {
  std::size_t top = kKernelSeriesTop;  // named kernel series per GPU
  double retire_after_s = 600;         // a slot's least hold, and the idle time that drops a series
  double half_life_s = 300;            // of a kernel's "recent time"
  std::size_t max_pods = 8;            // pods per GPU with series of their own
};

// Seconds are traced seconds: GPU time inside the windows the jobs traced
// (2 s of every 20 s by default), not wall time.
struct KernelSeriesRow {  // one GPU and pod
  int gpu = 0;
  sources::KubeRef pod;  // empty: not in a known pod
  double traced_s = 0;   // wall time covered by the pod's windows on this GPU (their union)
  double idle_s = 0;     // time the pod's processes ran nothing on the GPU (summed per process)
  double collective_s = 0, copy_s = 0, memset_s = 0;
  double other_s = 0;                                 // kernels without a series of their own
  std::vector<std::pair<std::string, double>> named;  // kernel label, seconds; by label
  // Launch counts, where the pod's processes sent them (else all 0 and has_launches false).
  bool has_windows = false, has_launches = false;
  double launches = 0, graph_launches = 0;
  double other_launches = 0;                                   // of kernels without a series
  std::vector<std::pair<std::string, double>> named_launches;  // kernel label, launches
};

// One process's new launches on one GPU since its previous count (agent/launch_ledger.hpp).
struct LaunchDelta {
  int gpu = 0;
  sources::KubeRef pod;
  std::uint64_t kernel_launches = 0, graph_launches = 0;
  std::vector<std::pair<std::string, std::uint64_t>> named;  // by kernel label
  std::uint64_t unnamed = 0;                                 // the rest of kernel_launches
};

class KernelSeries {
 public:
  explicit KernelSeries(KernelSeriesOptions options = {});

  // One stored window, at monotonic time `now_s` (its arrival).
  void add(const KernelWindow& w, double now_s);
  // One process's new launches, at monotonic time `now_s`.
  void add_launches(const LaunchDelta& d, double now_s);
  // Every series, after dropping those retired by `now_s`; by GPU, then pod.
  std::vector<KernelSeriesRow> rows(double now_s);

  const KernelSeriesOptions& options() const { return options_; }
  // Named series dropped so far (idle or replaced): the churn, for /metrics.
  std::uint64_t retired() const;
  // Names remembered without a series, over all GPUs (bounded; for tests).
  std::size_t waiting() const;

 private:
  struct Recent {  // time decayed with the half-life, as of `at_s`
    double value = 0, at_s = 0;
  };
  struct Named {
    double amount = 0;  // seconds or launches, as the slots count
    Recent recent;
    double since_s = 0, last_time_s = 0;
  };
  struct PodTotals {
    double traced_s = 0, idle_s = 0, collective_s = 0, copy_s = 0, memset_s = 0, other_s = 0;
    std::int64_t traced_until_ns = 0;  // end of the union so far
    double launches = 0, graph_launches = 0, other_launches = 0;
    bool windows = false, counted = false;  // whether windows, launch counts came
    double last_s = 0;                      // the last window's or count's arrival
  };
  using Key = std::pair<sources::KubeRef, std::string>;  // pod, kernel label
  struct KeyLess {
    bool operator()(const Key& a, const Key& b) const;
  };
  struct PodLess {
    bool operator()(const sources::KubeRef& a, const sources::KubeRef& b) const;
  };
  // Named series and names waiting for one, of one unit (seconds or launches).
  struct Slots {
    std::map<Key, Named, KeyLess> named;
    std::map<Key, Recent, KeyLess> waiting;
  };
  struct Gpu {
    std::map<sources::KubeRef, PodTotals, PodLess> pods;
    Slots time, launches;
  };

  double recent_at(const Recent& r, double now_s) const;
  void bump(Recent& r, double amount, double now_s) const;
  void retire(Gpu& g, double now_s);
  void retire(Slots& s, const Gpu& g, double now_s);
  void promote(Slots& s, double now_s);
  void remember(Slots& s, const Key& key, double amount, double now_s);
  // `amount` of `key` into its series, or a free slot; false: none, the caller counts
  // it as other.
  bool add_named(Slots& s, const Key& key, double amount, double now_s);
  PodTotals& pod_totals(Gpu& g, sources::KubeRef& pod, double now_s);

  KernelSeriesOptions options_;
  mutable std::mutex mutex_;
  std::map<int, Gpu> gpus_;
  std::uint64_t retired_ = 0;
};

}  // namespace gpulens::agent

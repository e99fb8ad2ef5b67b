// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which Kubernetes pod held which GPU when, by the kubelet's pod-resources API
// (docs/kubernetes.md), kept in the history (table kube_pods): one row per pod
// and GPU with the first and the last tick the kubelet listed the pod on it,
// whether anything ran there or not. `/api/v1/kubernetes/pods` lists them, so a
// pod that held a GPU idle is known after it is gone.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/result.hpp"
#include "core/sample.hpp"
#include "store/sqlite_db.hpp"

namespace gpulens::store {

struct PodUse {
  std::string namespace_name;
  std::string pod;
  int gpu = 0;
  double first_t = 0;  // Unix seconds of the first and the last tick listed
  double last_t = 0;
  bool operator==(const PodUse&) const = default;
};

// Uses collapsed by (namespace, pod, gpu): a batch of ticks becomes one row per
// key. Bounded by the pods holding GPUs, not by the ticks.
class PodUses {
 public:
  // The pods the samples' allocations (scheduler "kubernetes") say hold the GPU.
  void add_samples(const std::vector<Sample>& samples);
  void add(const PodUse& use);
  void merge(const PodUses& other);
  std::vector<PodUse> rows() const;
  // Keeps the `max` uses seen last (a writer waiting on a failing disk).
  void trim(std::size_t max);
  bool empty() const { return uses_.empty(); }
  std::size_t size() const { return uses_.size(); }
  void clear() { uses_.clear(); }

 private:
  std::map<std::tuple<std::string, std::string, int>, PodUse> uses_;
};

// Upserts `uses` (in the caller's transaction): a known row's span grows to cover
// the new one. Names longer than a Kubernetes name (253 bytes) are skipped.
Status write_pod_uses(Database& db, const std::vector<PodUse>& uses);

// Drops rows whose last tick is before `limit_ms` (retention).
Status expire_pod_uses(Database& db, std::int64_t limit_ms);

// The rows whose span meets [from, to], of `gpus` (empty: all), the latest
// first, at most `limit`.
Result<std::vector<PodUse>> pod_uses_between(Database& db, double from, double to,
                                             const std::vector<int>& gpus, std::size_t limit);

}  // namespace gpulens::store

// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the agent knows right now, as one immutable value: the newest sample of
// each GPU with its diagnosis, the alerts, and the sampler's own health. The
// sampling thread publishes a new snapshot per tick; HTTP threads render from a
// shared_ptr to it without holding any lock.
#include <bitset>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "diagnosis/alert_tracker.hpp"
#include "diagnosis/engine.hpp"
#include "diagnosis/hardware.hpp"
#include "sources/host/kube_pods.hpp"
#include "sources/tick_source.hpp"

namespace gpulens::agent {

struct GpuLive {
  DeviceInfo device;
  diagnosis::HardwareLimits limits;
  std::optional<Sample> sample;  // the newest; nullopt until the first one
  std::string state = "unknown";
  std::string state_meaning;
  double confidence = 0;
  double state_since = 0;
  std::string summary;
  std::vector<std::string> fixes;
  std::vector<diagnosis::Evidence> evidence;
  bool throttled = false;
  std::string throttle_cause;
  std::optional<double> efficiency;  // over the diagnosis window, 0..100
  bool lost = false;
  std::optional<std::int64_t> last_xid;
  std::uint64_t xid_count = 0;
  std::uint64_t collect_errors = 0;  // metrics that were read before but failed since
};

struct FiringAlert {
  diagnosis::ActiveAlert alert;
  std::vector<diagnosis::Evidence> evidence;
  std::vector<std::string> fixes;
};

struct SourceHealth {
  bool live = false;
  std::string description;  // "live NVML, 1 s interval" / "replay of FILE at 10x"
  bool ended = false;       // a replay reached its end (the last values stay served)
  std::string error;        // the source failed; empty when fine
  std::uint64_t ticks = 0;
  std::optional<sources::SamplerStats> sampler;  // live only
  std::optional<double> sample_cpu_s;            // CPU per GPU sample over the last tick
  double last_tick_wall = 0;                     // Unix time the last tick arrived
};

// Kubernetes names of the pods and containers that the processes on the GPUs run
// in, by container ID and pod UID (only those of this tick's processes).
struct KubeNames {
  bool kubernetes = false;  // a Kubernetes node: dcgm compat labels carry the names
  std::map<std::string, sources::KubeRef, std::less<>> by_container;
  std::map<std::string, sources::KubeRef, std::less<>> by_pod;
};

struct LiveSnapshot {
  std::uint64_t seq = 0;
  std::string hostname;
  std::string driver;
  std::optional<int> cpu_count;
  std::optional<double> interval_s;
  std::optional<double> host_cpu_pct;
  double t = 0;  // the newest sample's time
  double started_at = 0;
  std::vector<GpuLive> gpus;
  std::vector<FiringAlert> firing;
  // Newest last, bounded; shared between snapshots, replaced only when events
  // come, so that a tick does not copy them.
  std::shared_ptr<const std::vector<diagnosis::AlertEvent>> recent_events =
      std::make_shared<const std::vector<diagnosis::AlertEvent>>();
  SourceHealth source;
  KubeNames kube;
};

// The names of a process's pod (and container, when its ID is known); nullopt
// outside a pod or when the kubelet's logs do not name it.
std::optional<sources::KubeRef> kube_of_process(const LiveSnapshot& snap, const ProcessSample& p);

// The pod that dcgm-exporter would name for a GPU. It maps one pod per GPU; with
// several (time-slicing, MPS) this takes the one whose processes hold the most
// device memory there. Empty strings when no process on it is in a known pod.
sources::KubeRef kube_of_gpu(const LiveSnapshot& snap, const GpuLive& gpu);

using SnapshotPtr = std::shared_ptr<const LiveSnapshot>;

// Builds each tick's snapshot from the engine's view and the tick itself, and
// keeps what outlives a tick (XID counts, recent alert events).
class SnapshotBuilder {
 public:
  SnapshotBuilder(const TraceHeader& header, std::string hostname, bool keep_cmdline);
  // `events` are the engine's alert events of this tick (already taken).
  SnapshotPtr build(const Tick& tick, const diagnosis::DiagnosisEngine& engine,
                    const std::vector<diagnosis::AlertEvent>& events, const SourceHealth& source);
  SnapshotPtr empty_snapshot(const SourceHealth& source) const;
  // Names pods and containers from now on; the resolver must outlive the builder.
  void use_kube(sources::KubePodResolver* resolver) { kube_ = resolver; }

 private:
  GpuLive& gpu_slot(int gpu);
  void name_pods();

  LiveSnapshot base_;  // carries state between ticks
  bool keep_cmdline_;
  sources::KubePodResolver* kube_ = nullptr;
  std::map<int, std::bitset<kMetricCount>> ever_seen_;  // metrics each GPU has reported
  std::map<std::pair<std::string, int>, diagnosis::AlertEvent> last_firing_;
};

// The recent-events ring's bound.
inline constexpr std::size_t kRecentEvents = 200;

}  // namespace gpulens::agent

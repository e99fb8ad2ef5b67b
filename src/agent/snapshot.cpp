// SPDX-License-Identifier: Apache-2.0
#include "agent/snapshot.hpp"

#include <algorithm>

#include "core/clock.hpp"

namespace gpulens::agent {
namespace {

std::optional<std::int64_t> integer_field(const nlohmann::json& fields, const char* key) {
  const auto it = fields.find(key);
  if (it == fields.end() || !it->is_number()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

SnapshotBuilder::SnapshotBuilder(const TraceHeader& header, std::string hostname, bool keep_cmdline)
    : keep_cmdline_(keep_cmdline) {
  base_.started_at = unix_now();
  base_.hostname = hostname.empty() ? header.host : std::move(hostname);
  base_.driver = header.driver;
  base_.cpu_count = header.cpu_count;
  base_.interval_s = header.interval_s;
  for (const auto& d : header.devices) {
    GpuLive g;
    g.device = d;
    base_.gpus.push_back(std::move(g));
  }
  std::sort(base_.gpus.begin(), base_.gpus.end(),
            [](const GpuLive& a, const GpuLive& b) { return a.device.index < b.device.index; });
}

GpuLive& SnapshotBuilder::gpu_slot(int gpu) {
  auto it = std::find_if(base_.gpus.begin(), base_.gpus.end(),
                         [gpu](const GpuLive& g) { return g.device.index == gpu; });
  if (it != base_.gpus.end()) return *it;
  // A GPU the header did not list (a trace that adds one): describe it by index.
  GpuLive g;
  g.device.index = gpu;
  base_.gpus.push_back(std::move(g));
  std::sort(base_.gpus.begin(), base_.gpus.end(),
            [](const GpuLive& a, const GpuLive& b) { return a.device.index < b.device.index; });
  return gpu_slot(gpu);
}

SnapshotPtr SnapshotBuilder::empty_snapshot(const SourceHealth& source) const {
  auto snap = std::make_shared<LiveSnapshot>(base_);
  snap->source = source;
  return snap;
}

SnapshotPtr SnapshotBuilder::build(const Tick& tick, const diagnosis::DiagnosisEngine& engine,
                                   const std::vector<diagnosis::AlertEvent>& events,
                                   const SourceHealth& source) {
  for (const auto& mark : tick.marks) {
    if (mark.name != "xid") continue;
    const auto gpu = integer_field(mark.fields, "gpu");
    if (!gpu) continue;
    GpuLive& g = gpu_slot(static_cast<int>(*gpu));
    g.last_xid = integer_field(mark.fields, "xid");
    ++g.xid_count;
  }
  for (const auto& sample : tick.samples) {
    GpuLive& g = gpu_slot(sample.gpu);
    if (sample.values.empty()) continue;  // a GPU that did not answer this tick
    auto& seen = ever_seen_[sample.gpu];
    for (const auto& info : all_metrics()) {
      const auto i = index_of(info.id);
      if (sample.values.has(info.id)) {
        seen.set(i);
      } else if (seen.test(i) && source.live) {
        ++g.collect_errors;
      }
    }
    // Processes are read less often than counters (a recording lists them every
    // few seconds): a tick without a process read keeps the last known list, so
    // the API, /metrics and the dashboard do not flash "no process" in between.
    // A read that finds none is an empty list, not nullopt, and replaces it.
    std::optional<std::vector<ProcessSample>> held;
    if (!sample.procs && g.sample && g.sample->procs) held = std::move(g.sample->procs);
    g.sample = sample;
    if (held) g.sample->procs = std::move(held);
    if (!keep_cmdline_ && g.sample->procs) {
      for (auto& p : *g.sample->procs) p.cmdline.clear();
    }
    if (const auto cpu = sample.values.get(Metric::HostCpuPct)) base_.host_cpu_pct = cpu;
    base_.t = std::max(base_.t, sample.t);
  }
  for (auto& g : base_.gpus) {
    const int gpu = g.device.index;
    const diagnosis::GpuStatus& st = engine.status(gpu);
    g.limits = engine.limits(gpu);
    g.lost = st.lost;
    if (!st.seen) continue;
    g.state = std::string(diagnosis::state_id(st.state.state));
    g.state_meaning = std::string(diagnosis::state_meaning(st.state.state));
    g.confidence = st.state.confidence;
    g.state_since = st.state_since;
    g.evidence = st.state.evidence;
    g.throttled = st.throttle.throttled;
    g.throttle_cause = st.throttle.cause;
    g.efficiency = st.efficiency;
    g.summary = engine.summary(gpu);
    g.fixes = engine.fixes(gpu);
  }
  if (!events.empty()) {
    auto recent = std::make_shared<std::vector<diagnosis::AlertEvent>>(*base_.recent_events);
    for (const auto& e : events) {
      recent->push_back(e);
      // The tracker's view of a firing alert has no evidence or fixes: keep
      // the firing event's.
      if (e.kind == diagnosis::AlertEvent::Kind::Firing) last_firing_[{e.rule, e.gpu}] = e;
    }
    if (recent->size() > kRecentEvents) {
      recent->erase(recent->begin(), recent->end() - static_cast<std::ptrdiff_t>(kRecentEvents));
    }
    base_.recent_events = std::move(recent);
  }
  std::vector<FiringAlert> firing;
  for (const auto& a : engine.firing()) {
    FiringAlert f{a, {}, {}};
    if (auto it = last_firing_.find({a.rule, a.gpu}); it != last_firing_.end()) {
      f.evidence = it->second.evidence;
      f.fixes = it->second.fixes;
    }
    firing.push_back(std::move(f));
  }
  std::stable_sort(firing.begin(), firing.end(), [](const FiringAlert& x, const FiringAlert& y) {
    return x.alert.severity > y.alert.severity;
  });
  base_.firing = std::move(firing);
  name_pods();
  base_.source = source;
  ++base_.seq;
  return std::make_shared<const LiveSnapshot>(base_);
}

void SnapshotBuilder::name_pods() {
  if (kube_ == nullptr) return;
  kube_->refresh();  // lists the kubelet's log directories only when they changed
  KubeNames names;
  names.kubernetes = kube_->kubernetes();
  for (const auto& g : base_.gpus) {
    if (!g.sample || !g.sample->procs) continue;
    for (const auto& p : *g.sample->procs) {
      if (!p.container.empty() && !names.by_container.contains(p.container)) {
        if (auto ref = kube_->by_container(p.container))
          names.by_container.emplace(p.container, std::move(*ref));
      }
      if (!p.pod.empty() && !names.by_pod.contains(p.pod)) {
        if (auto ref = kube_->by_pod(p.pod)) names.by_pod.emplace(p.pod, std::move(*ref));
      }
    }
  }
  base_.kube = std::move(names);
}

std::optional<sources::KubeRef> kube_of_process(const LiveSnapshot& snap, const ProcessSample& p) {
  if (!p.container.empty()) {
    if (const auto it = snap.kube.by_container.find(p.container);
        it != snap.kube.by_container.end())
      return it->second;
  }
  if (!p.pod.empty()) {
    if (const auto it = snap.kube.by_pod.find(p.pod); it != snap.kube.by_pod.end())
      return it->second;
  }
  return std::nullopt;
}

sources::KubeRef kube_of_gpu(const LiveSnapshot& snap, const GpuLive& gpu) {
  if (!gpu.sample || !gpu.sample->procs) return {};
  // Device memory per pod; the container of the pod's largest process names it.
  struct Candidate {
    double mib = 0;
    double largest = -1;
    sources::KubeRef ref;
  };
  std::map<std::pair<std::string, std::string>, Candidate> pods;
  for (const auto& p : *gpu.sample->procs) {
    auto ref = kube_of_process(snap, p);
    if (!ref) continue;
    auto& c = pods[{ref->namespace_name, ref->pod}];
    const double mib = p.used_mib.value_or(0);
    c.mib += mib;
    if (mib > c.largest || (c.ref.container.empty() && !ref->container.empty())) {
      c.largest = std::max(c.largest, mib);
      c.ref = std::move(*ref);
    }
  }
  const Candidate* best = nullptr;
  for (const auto& [key, c] : pods) {
    if (best == nullptr || c.mib > best->mib) best = &c;  // ties: the first by name
  }
  return best != nullptr ? best->ref : sources::KubeRef{};
}

}  // namespace gpulens::agent

// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/xid.hpp"
#include "diagnosis/efficiency.hpp"
#include "diagnosis/fixes.hpp"

namespace gpulens::diagnosis {

struct DiagnosisEngine::Slot {
  Slot(const DeviceInfo& device, const DiagnosisConfig& config, MemoryTrendSettings memory_settings)
      : hw(hardware_limits(device, config.hardware)),
        window(config.window, hw),
        memory(memory_settings) {
    status.gpu = device.index;
    keys.gpu = device.index;
  }
  HardwareLimits hw;
  SampleWindow window;
  MemoryTrendTracker memory;
  std::optional<MemoryTrend> trend;
  GpuJobKeys keys;
  GpuStatus status;
  bool updated = false;
};

namespace {

MemoryTrendSettings memory_settings_from(const RuleSettings& r) {
  MemoryTrendSettings s;
  s.lookback_s = r.param("lookback_s");
  s.min_span_s = r.param("min_span_s");
  s.bucket_s = r.param("bucket_s");
  s.min_r2 = r.param("min_r2");
  s.min_rising_share = r.param("min_rising_share");
  s.max_step_share = r.param("max_step_share");
  s.max_drawdown_share = r.param("max_drawdown_share");
  s.max_prior_peak_share = r.param("max_prior_peak_share");
  s.min_growth_mib = r.param("min_growth_mib");
  s.max_time_to_oom_s = r.param("max_time_to_oom_h") * 3600;
  s.fast_min_span_s = r.param("fast_min_span_s");
  s.fast_horizon_factor = r.param("fast_horizon_factor");
  return s;
}

std::optional<long> integer_field(const nlohmann::json& fields, const char* key) {
  const auto it = fields.find(key);
  if (it == fields.end()) return std::nullopt;
  if (it->is_number()) return static_cast<long>(std::llround(it->get<double>()));
  if (it->is_string()) {
    try {
      return std::stol(it->get<std::string>());
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

bool is_phase_mark(const std::string& name) {
  return (name.size() > 6 && name.ends_with(":start")) ||
         (name.size() > 4 && name.ends_with(":end"));
}

const GpuStatus& unseen_status() {
  static const GpuStatus status{};
  return status;
}

const HardwareLimits& unknown_limits() {
  static const HardwareLimits hw{};
  return hw;
}

}  // namespace

DiagnosisEngine::DiagnosisEngine(const TraceHeader& header, DiagnosisConfig config,
                                 std::vector<std::vector<int>> job_groups)
    : config_(std::move(config)),
      explicit_groups_(std::move(job_groups)),
      devices_(header.devices) {
  fix_.price_per_gpu_hour = config_.price_per_gpu_hour;
  fix_.currency = config_.currency;
  fix_.cpu_count = header.cpu_count;
  fix_.kernels = config_.kernels;
  memory_settings_ = memory_settings_from(config_.rule("memory_growth"));
  rules_ = make_alert_rules(config_);
  for (const auto& d : devices_) slot(d.index);
}

DiagnosisEngine::DiagnosisEngine(DiagnosisEngine&&) noexcept = default;
DiagnosisEngine& DiagnosisEngine::operator=(DiagnosisEngine&&) noexcept = default;
DiagnosisEngine::~DiagnosisEngine() = default;

DiagnosisEngine::Slot& DiagnosisEngine::slot(int gpu) {
  auto it = slots_.find(gpu);
  if (it != slots_.end()) return *it->second;
  DeviceInfo device;
  device.index = gpu;
  for (const auto& d : devices_) {
    if (d.index == gpu) device = d;
  }
  groups_dirty_ = true;
  Slot& made =
      *slots_.emplace(gpu, std::make_unique<Slot>(device, config_, memory_settings_)).first->second;
  made.hw.host_cpu_count = fix_.cpu_count;
  return made;
}

const DiagnosisEngine::Slot* DiagnosisEngine::find(int gpu) const {
  const auto it = slots_.find(gpu);
  return it == slots_.end() ? nullptr : it->second.get();
}

void DiagnosisEngine::on_tick(const Tick& tick) {
  for (const auto& mark : tick.marks) handle_mark(mark);
  for (auto& [gpu, s] : slots_) s->updated = false;
  for (const auto& sample : tick.samples) add_sample(sample);
  if (groups_dirty_) regroup();
  for (auto& [gpu, s] : slots_) {
    if (s->updated) judge(*s, s->status.t);
  }
  tracker_.expire(tick.t);
}

void DiagnosisEngine::handle_mark(const Mark& mark) {
  // `gpulens run` marks its job's start: from then on the GPU's processes are
  // the user's own job, and the fixes speak of it (not of a process to end).
  if (mark.name == "job_start") fix_.in_job = true;
  if (is_phase_mark(mark.name)) {
    if (config_.reset_on_phase_marks) {
      for (auto& [gpu, s] : slots_) s->window.reset();
    }
    return;
  }
  const auto gpu = integer_field(mark.fields, "gpu");
  if (mark.name == "xid") {
    const RuleSettings& rule = config_.rule("xid_error");
    const auto xid = integer_field(mark.fields, "xid");
    if (!rule.enabled || !gpu || !xid) return;
    RuleSettings settings = rule;
    // Application XIDs are the program's fault, not the GPU's: a warning.
    if (xid_is_application(*xid) && settings.severity == Severity::Critical) {
      settings.severity = Severity::Warning;
    }
    const auto meaning = xid_meaning(*xid);
    const int g = static_cast<int>(*gpu);
    AlertText text{
        fmt::format("GPU {} reported XID {}{}{}.", g, *xid, meaning.empty() ? "" : ": ", meaning),
        {Evidence{"xid", static_cast<double>(*xid), {}, {}, {}, std::string(meaning)}},
        fixes_for_alert("xid_error", {}, {}, unknown_limits(), fix_)};
    tracker_.point(settings, g, *xid, mark.t, std::move(text), rule.param("quiet_s"));
  } else if (mark.name == "gpu_lost") {
    const RuleSettings& rule = config_.rule("gpu_lost");
    if (!gpu) return;
    const int g = static_cast<int>(*gpu);
    slot(g).status.lost = true;
    if (!rule.enabled) return;
    AlertText text{fmt::format("GPU {} stopped answering (lost).", g),
                   {},
                   fixes_for_alert("gpu_lost", {}, {}, unknown_limits(), fix_)};
    tracker_.point(rule, g, 0, mark.t, std::move(text), std::nullopt);
  }
}

void DiagnosisEngine::add_sample(const Sample& sample) {
  Slot& s = slot(sample.gpu);
  if (sample.values.empty()) return;  // a placeholder for a GPU that did not answer
  if (s.status.lost) {
    s.status.lost = false;
    tracker_.resolve("gpu_lost", sample.gpu, 0, sample.t);
  }
  s.window.push(sample);
  s.status.seen = true;
  s.status.t = sample.t;
  s.updated = true;
  if (sample.procs) {  // between process listings the last one stands
    GpuJobKeys keys = job_keys_of(sample);
    if (keys.keys != s.keys.keys || keys.has_job_info != s.keys.has_job_info) {
      s.keys = std::move(keys);
      groups_dirty_ = true;
    }
  }
  if (const auto used = sample.values.get(Metric::MemUsedMib)) {
    if (s.memory.add(sample.t, *used)) s.trend = s.memory.analyze(s.hw.mem_total_mib);
  }
}

void DiagnosisEngine::regroup() {
  std::vector<GpuJobKeys> keys;
  for (const auto& [gpu, s] : slots_) keys.push_back(s->keys);
  groups_ = group_gpus(keys, config_.job_grouping, explicit_groups_);
  // One pass over the groups, one map lookup per member: no search of every group
  // for every GPU (cubic in the number of GPUs before).
  for (const auto& g : groups_) {
    for (int gpu : g) {
      if (const auto it = slots_.find(gpu); it != slots_.end()) it->second->status.job = g;
    }
  }
  groups_dirty_ = false;
}

void DiagnosisEngine::judge(Slot& s, double t) {
  GpuStatus& st = s.status;
  std::vector<PeerActivity> peers;
  for (int other : st.job) {
    if (other == st.gpu) continue;
    const Slot* o = find(other);
    if (!o || !o->status.seen || o->window.empty() || o->status.lost) continue;
    const WindowStats& ow = o->window.stats();
    peers.push_back(
        {other, ow.get(Metric::SmActive), ow.get(Metric::GpuUtil), busiest_math_pipe(ow)});
  }
  st.window = s.window.stats();
  for (const auto& [gpu, slot] : slots_) {
    if (slot->window.empty()) continue;
    if (const auto cpu = slot->window.stats().procs.cpu_pct) {
      st.window.procs.host_gpus_cpu_pct = st.window.procs.host_gpus_cpu_pct.value_or(0) + *cpu;
    }
  }
  const GpuState previous = st.state.state;
  st.state = classify_state(st.window, s.hw, config_.thresholds, peers, config_.window.length_s);
  if (st.state.state != previous || st.state_since == 0) st.state_since = t;
  st.throttle = detect_throttle(st.window, s.hw, config_.thresholds);
  st.efficiency = efficiency_score(st.window.mean);

  const RuleInput input{st.gpu,
                        t,
                        st.window,
                        s.hw,
                        config_.thresholds,
                        st.state,
                        st.throttle,
                        s.trend ? &*s.trend : nullptr,
                        peers,
                        fix_,
                        st.state_since};
  for (const auto& rule : rules_) {
    const RuleVerdict verdict = rule->check(input);
    tracker_.update(rule->settings(), st.gpu, t, verdict,
                    [&rule, &input] { return rule->describe(input); });
  }
}

std::vector<int> DiagnosisEngine::gpus() const {
  std::vector<int> out;
  for (const auto& [gpu, s] : slots_) out.push_back(gpu);
  return out;
}

const GpuStatus& DiagnosisEngine::status(int gpu) const {
  const Slot* s = find(gpu);
  return s ? s->status : unseen_status();
}

const HardwareLimits& DiagnosisEngine::limits(int gpu) const {
  const Slot* s = find(gpu);
  return s ? s->hw : unknown_limits();
}

std::string DiagnosisEngine::summary(int gpu) const {
  const GpuStatus& st = status(gpu);
  if (st.lost) return "The GPU stopped answering.";
  if (!st.seen) return "No sample yet.";
  std::string text = describe_state(st.state, limits(gpu));
  if (st.throttle.throttled) text += " Throttled: " + describe_throttle(st.throttle) + ".";
  return text;
}

std::vector<std::string> DiagnosisEngine::fixes(int gpu) const {
  const GpuStatus& st = status(gpu);
  std::vector<std::string> out;
  bool hung = false;
  for (const auto& a : firing(gpu)) {
    if (a.severity == Severity::Critical) append_unique(out, a.fixes);
    hung = hung || a.rule == "stalled";
  }
  // A hang's fixes stand alone: tuning a kernel that waits for something that
  // never comes (more blocks, a larger batch) is no advice (docs/diagnosis.md).
  if (!hung) append_unique(out, fixes_for_state(st.state, st.window, limits(gpu), fix_));
  append_unique(out, fixes_for_throttle(st.throttle));
  return out;
}

GpuBrief DiagnosisEngine::brief(int gpu) const {
  const GpuStatus& st = status(gpu);
  GpuBrief b;
  b.gpu = gpu;
  b.state = std::string(state_id(st.state.state));
  b.confidence = st.state.confidence;
  b.throttled = st.throttle.throttled;
  b.throttle_cause = st.throttle.cause;
  auto active = firing(gpu);
  std::stable_sort(active.begin(), active.end(), [](const ActiveAlert& x, const ActiveAlert& y) {
    return x.severity > y.severity;
  });
  for (const auto& a : active) {
    if (std::find(b.alerts.begin(), b.alerts.end(), a.rule) == b.alerts.end()) {
      b.alerts.push_back(a.rule);
    }
  }
  b.summary = summary(gpu);
  return b;
}

std::vector<AlertEvent> DiagnosisEngine::take_events() {
  return tracker_.take_events();
}
std::vector<ActiveAlert> DiagnosisEngine::firing() const {
  return tracker_.firing();
}
std::vector<ActiveAlert> DiagnosisEngine::firing(int gpu) const {
  return tracker_.firing(gpu);
}

}  // namespace gpulens::diagnosis

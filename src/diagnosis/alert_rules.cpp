// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/alert_rules.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/text_units.hpp"
#include "diagnosis/config.hpp"
#include "diagnosis/efficiency.hpp"

namespace gpulens::diagnosis {
namespace {

// The hysteresis every rule shares: firing wins, then clearing, else hold.
RuleVerdict verdict(bool fire, bool clear) {
  if (fire) return RuleVerdict::Fire;
  return clear ? RuleVerdict::Clear : RuleVerdict::Hold;
}

std::vector<std::string> state_fixes(const RuleInput& in, std::string_view rule) {
  return fixes_for_alert(rule, in.state, in.window, in.hw, in.fix);
}

class HighUtilLowActivity final : public AlertRule {
 public:
  using AlertRule::AlertRule;
  RuleVerdict check(const RuleInput& in) const override {
    const auto u = in.window.get(Metric::GpuUtil);
    const auto s = in.window.get(Metric::SmActive);
    if (!u || !s) return RuleVerdict::Hold;
    return verdict(*u >= settings_.param("util_min") && *s < settings_.param("sm_active_max"),
                   *u < settings_.param("util_clear") || *s >= settings_.param("sm_active_clear"));
  }
  AlertText describe(const RuleInput& in) const override {
    return {kHighUtilLowActivityMessage,
            {ev("gpu_util", in.window.get(Metric::GpuUtil), ">=", settings_.param("util_min"), "%"),
             ev("sm_active", in.window.get(Metric::SmActive), "<", settings_.param("sm_active_max"),
                "%")},
            state_fixes(in, settings_.id)};
  }
};

class LowEfficiency final : public AlertRule {
 public:
  using AlertRule::AlertRule;
  RuleVerdict check(const RuleInput& in) const override {
    const auto u = in.window.get(Metric::GpuUtil);
    const auto s = in.window.get(Metric::SmActive);
    if (!u || !s) return RuleVerdict::Hold;
    const double ratio = *u > 0 ? *s / *u : 0.0;
    return verdict(*u >= settings_.param("util_min") && ratio < settings_.param("ratio_max"),
                   *u < settings_.param("util_clear") || ratio >= settings_.param("ratio_clear"));
  }
  AlertText describe(const RuleInput& in) const override {
    return {kLowEfficiencyMessage,
            {ev("gpu_util", in.window.get(Metric::GpuUtil), ">=", settings_.param("util_min"), "%"),
             ev("efficiency", efficiency_score(in.window.mean), "<",
                settings_.param("ratio_max") * 100, "%", "SM activity / utilization")},
            state_fixes(in, settings_.id)};
  }
};

// A hang: a kernel stays resident (on 1 SM or all of them: NCCL runs one block
// per channel, and a rank of a hung collective may hold dozens of SMs) while
// nothing it could be doing shows: no FP or tensor pipe, no DRAM, no PCIe or
// NVLink traffic, power low, and every counter flat. Spinning on a flag reads
// as SM activity, so the SM share says nothing about a hang; doing nothing does.
class Stalled final : public AlertRule {
 public:
  using AlertRule::AlertRule;
  RuleVerdict check(const RuleInput& in) const override {
    const auto& w = in.window;
    const auto u = w.get(Metric::GpuUtil);
    const auto s = w.get(Metric::SmActive);
    const auto pipes = pipe_max(w);
    const auto dram = w.max.get(Metric::DramActive);
    // Without SM activity and at least one of pipes or DRAM there is no telling
    // a spin from work.
    if (!u || !s || (!pipes && !dram)) return RuleVerdict::Hold;
    const bool resident = *u >= settings_.param("util_min");
    const bool no_math = (!pipes || *pipes < settings_.param("pipe_active_max")) &&
                         !integer_work(w, settings_.param("int_share_max"));
    const bool no_dram = !dram || *dram < settings_.param("dram_active_max");
    const auto power = power_share(in);
    const bool low_power = !power || *power < settings_.param("power_share_max");
    const bool still = range(w, Metric::SmActive) <= settings_.param("sm_active_range_max") &&
                       range(w, Metric::MemUsedMib) <= settings_.param("memory_range_max_mib") &&
                       link_share(w, in.hw) < settings_.param("link_share_max");
    if (resident && no_math && no_dram && low_power) {
      return still ? RuleVerdict::Fire : RuleVerdict::Hold;
    }
    return RuleVerdict::Clear;
  }
  AlertText describe(const RuleInput& in) const override {
    const auto& w = in.window;
    AlertText text;
    std::string sms;
    if (const auto s = w.get(Metric::SmActive); s && in.hw.sm_count) {
      sms = fmt::format(" on about {:.0f} of {} SMs", std::max(1.0, *s / 100 * *in.hw.sm_count),
                        *in.hw.sm_count);
    }
    text.message = fmt::format(
        "GPU {} looks hung: a kernel is resident ({} utilization, {} SM "
        "activity{}) but no math pipe, DRAM or link works, power is low and nothing has "
        "changed for {} or more.",
        in.gpu, points_text(w.get(Metric::GpuUtil).value_or(0)),
        points_text(w.get(Metric::SmActive).value_or(0), 1), sms, duration_text(settings_.for_s));
    text.evidence = {
        ev("gpu_util", w.get(Metric::GpuUtil), ">=", settings_.param("util_min"), "%"),
        ev("sm_active", w.get(Metric::SmActive), {}, {}, "%", "warps resident, spinning or not"),
        ev("sm_active_range", range(w, Metric::SmActive),
           "<=", settings_.param("sm_active_range_max"), "points")};
    if (const auto p = pipe_max(w)) {
      text.evidence.push_back(ev("pipe_active_max", *p, "<", settings_.param("pipe_active_max"),
                                 "%", "busiest tensor/FP16/FP32/FP64 pipe, window maximum"));
    }
    if (const auto d = w.max.get(Metric::DramActive)) {
      text.evidence.push_back(ev("dram_active_max", *d, "<", settings_.param("dram_active_max"),
                                 "%", "window maximum"));
    }
    if (const auto p = power_share(in)) {
      text.evidence.push_back(ev("power_share", *p, "<", settings_.param("power_share_max"),
                                 "ratio", "board power over its limit"));
    }
    text.fixes = state_fixes(in, settings_.id);
    // In a collective every rank that arrived launched its kernel and spins in it;
    // a rank that never arrived has no kernel resident on its GPU. Peers of the
    // job without one are where the hang starts: their process is the one to dump.
    const auto absent = peers_without_kernel(in);
    if (!absent.empty()) {
      const auto gpus = gpu_list(absent);
      const bool one = absent.size() == 1;
      text.message += fmt::format(
          " {} of the same job {} no kernel meanwhile: in a collective, {} not arrived.", gpus,
          one ? "runs" : "run", one ? "its rank has" : "their ranks have");
      text.fixes.insert(text.fixes.begin(),
                        fmt::format("Start with {}: {} never reached the collective the "
                                    "others wait in. `py-spy dump --pid PID` on it shows where it "
                                    "is (nvidia-smi or the process table gives its PID).",
                                    gpus, one ? "its process" : "their processes"));
      text.evidence.push_back(ev("peers_without_kernel", static_cast<double>(absent.size()), {}, {},
                                 "GPUs",
                                 "job peers below the utilization a resident kernel gives"));
    }
    return text;
  }

 private:
  std::vector<int> peers_without_kernel(const RuleInput& in) const {
    std::vector<int> absent;
    for (const auto& p : in.peers) {
      if (p.gpu_util && *p.gpu_util < settings_.param("util_min")) absent.push_back(p.gpu);
    }
    return absent;
  }
  static std::string gpu_list(const std::vector<int>& gpus) {
    std::string out = gpus.size() == 1 ? "GPU " : "GPUs ";
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (i > 0) out += i + 1 == gpus.size() ? " and " : ", ";
      out += std::to_string(gpus[i]);
    }
    return out;
  }

  // The integer pipe at work in proportion to the SMs resident: a hash or index
  // kernel, not a spin (recordings before int_active existed cannot say).
  static bool integer_work(const WindowStats& w, double share_min) {
    const auto i = w.get(Metric::IntActive);
    const auto s = w.get(Metric::SmActive);
    return i && s && *s >= 1.0 && *i / *s >= share_min;
  }
  static std::optional<double> pipe_max(const WindowStats& w) {
    std::optional<double> out;
    for (Metric m :
         {Metric::TensorActive, Metric::Fp16Active, Metric::Fp32Active, Metric::Fp64Active}) {
      if (const auto v = w.max.get(m)) out = std::max(out.value_or(0.0), *v);
    }
    return out;
  }
  static double range(const WindowStats& w, Metric m) {
    if (!w.min.has(m)) return 0.0;
    return w.max.value_or(m, 0) - w.min.value_or(m, 0);
  }
  static double link_share(const WindowStats& w, const HardwareLimits& hw) {
    double share = 0;
    const auto peak = [&](Metric a, Metric b) {
      return std::max(w.max.value_or(a, 0), w.max.value_or(b, 0));
    };
    if (hw.pcie_mibs)
      share = std::max(share, peak(Metric::PcieRxMibs, Metric::PcieTxMibs) / *hw.pcie_mibs);
    if (hw.nvlink_mibs) {
      share = std::max(share, peak(Metric::NvlinkRxMibs, Metric::NvlinkTxMibs) / *hw.nvlink_mibs);
    }
    return share;
  }
  static std::optional<double> power_share(const RuleInput& in) {
    const auto p = in.window.get(Metric::PowerW);
    if (!p || !in.hw.power_limit_w || *in.hw.power_limit_w <= 0) return std::nullopt;
    return *p / *in.hw.power_limit_w;
  }
};

class MemoryGrowth final : public AlertRule {
 public:
  using AlertRule::AlertRule;
  RuleVerdict check(const RuleInput& in) const override {
    if (!in.memory) return RuleVerdict::Hold;
    return in.memory->growing ? RuleVerdict::Fire : RuleVerdict::Clear;
  }
  AlertText describe(const RuleInput& in) const override {
    const MemoryTrend& m = *in.memory;
    AlertText text;
    text.message =
        m.fast ? fmt::format(
                     "GPU {} device memory is rising fast: {:.1f} GiB/s over the last {}, "
                     "now {}",
                     in.gpu, m.slope_mib_s / 1024, duration_text(m.span_s), gib_text(m.current_mib))
               : fmt::format(
                     "GPU {} device memory is rising steadily: {:.0f} MiB/min over the last {}, "
                     "now {}",
                     in.gpu, m.slope_mib_s * 60, duration_text(m.span_s), gib_text(m.current_mib));
    if (m.time_to_oom_s) {
      text.message += fmt::format("; out of memory in about {}.", duration_text(*m.time_to_oom_s));
    } else {
      text.message += ".";
    }
    text.evidence = {
        ev("memory_slope", m.slope_mib_s * 60, {}, {}, "MiB/min"),
        ev("r2", m.r2, ">=", settings_.param("min_r2"), "ratio"),
        ev("rising_share", m.rising_share, ">=", settings_.param("min_rising_share"), "ratio"),
        ev("largest_step_share", m.step_share, "<=", settings_.param("max_step_share"), "ratio"),
        ev("drawdown_share", m.drawdown_share, "<=", settings_.param("max_drawdown_share"),
           "ratio"),
        ev("prior_peak_share", m.prior_peak_share, "<=", settings_.param("max_prior_peak_share"),
           "ratio")};
    if (m.fast) {
      text.evidence.push_back(
          ev("rise_span", m.span_s, ">=", settings_.param("fast_min_span_s"), "s"));
      if (m.time_to_oom_s) {
        text.evidence.push_back(ev("time_to_oom", *m.time_to_oom_s,
                                   "<=", settings_.param("fast_horizon_factor") * m.span_s, "s"));
      }
    } else if (m.time_to_oom_s) {
      text.evidence.push_back(ev("time_to_oom", *m.time_to_oom_s, {}, {}, "s"));
    }
    text.fixes = state_fixes(in, settings_.id);
    return text;
  }
};

class IdleHoldingMemory final : public AlertRule {
 public:
  using AlertRule::AlertRule;
  RuleVerdict check(const RuleInput& in) const override {
    if (in.state.state == GpuState::IdleHoldingMemory) return RuleVerdict::Fire;
    // Hysteresis: stay firing while idle with memory above half the line.
    const auto& f = in.state.facts;
    const bool idle = in.state.state == GpuState::Idle;
    if (idle && f.mem_held_share && *f.mem_held_share >= in.thresholds.idle_memory_share_min / 2)
      return RuleVerdict::Hold;
    return RuleVerdict::Clear;
  }
  AlertText describe(const RuleInput& in) const override {
    const auto& f = in.state.facts;
    AlertText text;
    const double idle_s = in.t - in.state_since;
    text.message = fmt::format(
        "GPU {} has run no kernel for {} while {} ({}) of its "
        "memory is held",
        in.gpu, duration_text(std::max(idle_s, settings_.for_s)),
        gib_text(f.mem_held_mib.value_or(0)), share_text(f.mem_held_share.value_or(0)));
    if (!in.window.procs.top_mem_name.empty()) {
      text.message +=
          fmt::format(" by {} (pid {})", in.window.procs.top_mem_name, in.window.procs.top_mem_pid);
    }
    const auto cost = cost_per_hour_text(in.fix);
    text.message += cost.empty() ? "." : "; it costs " + cost + ".";
    text.evidence = in.state.evidence;
    text.fixes = state_fixes(in, settings_.id);
    return text;
  }
};

class Throttled final : public AlertRule {
 public:
  using AlertRule::AlertRule;
  RuleVerdict check(const RuleInput& in) const override {
    return verdict(in.throttle.throttled, in.throttle.share < in.thresholds.throttle_share_min / 2);
  }
  AlertText describe(const RuleInput& in) const override {
    return {fmt::format("GPU {} is throttled: {}.", in.gpu, describe_throttle(in.throttle)),
            in.throttle.evidence, fixes_for_throttle(in.throttle)};
  }
};

class GpuImbalance final : public AlertRule {
 public:
  using AlertRule::AlertRule;
  RuleVerdict check(const RuleInput& in) const override {
    const auto s = in.window.get(Metric::SmActive);
    const auto u = in.window.get(Metric::GpuUtil);
    const auto peer = busiest(in);
    if (!s || !peer) return RuleVerdict::Hold;
    // An idle GPU is not lagging: it may not belong to the job at all.
    const bool working = !u || *u >= in.thresholds.idle_util_max;
    const double gap = *peer->sm_active - *s;
    return verdict(working && gap > settings_.param("points"),
                   !working || gap < settings_.param("clear_points"));
  }
  AlertText describe(const RuleInput& in) const override {
    const auto* peer = busiest(in);
    const double s = in.window.get(Metric::SmActive).value_or(0);
    const double p = peer ? peer->sm_active.value_or(0) : 0;
    return {fmt::format("GPUs of one job are out of balance: GPU {} at {} SM activity, "
                        "GPU {} at {}.",
                        in.gpu, points_text(s, 1), peer ? peer->gpu : -1, points_text(p, 1)),
            {ev("sm_active_gap", p - s, ">", settings_.param("points"), "points")},
            state_fixes(in, settings_.id)};
  }

 private:
  static const PeerActivity* busiest(const RuleInput& in) {
    const PeerActivity* best = nullptr;
    for (const auto& p : in.peers) {
      if (p.sm_active && (!best || *p.sm_active > *best->sm_active)) best = &p;
    }
    return best;
  }
};

class ThresholdRule final : public AlertRule {
 public:
  explicit ThresholdRule(CustomRule rule) : AlertRule(settings_of(rule)), rule_(std::move(rule)) {}
  RuleVerdict check(const RuleInput& in) const override {
    const auto v = rule_metric_value(rule_.metric, in.window, in.hw);
    if (!v) return RuleVerdict::Hold;
    return verdict(compare(*v, rule_.op, rule_.value),
                   !compare(*v, rule_.op, rule_.clear.value_or(rule_.value)));
  }
  AlertText describe(const RuleInput& in) const override {
    return {rule_.message,
            {ev(rule_.metric, rule_metric_value(rule_.metric, in.window, in.hw),
                std::string(compare_op_text(rule_.op)), rule_.value)},
            {}};
  }

 private:
  static RuleSettings settings_of(const CustomRule& r) {
    RuleSettings s;
    s.id = r.name;
    s.enabled = r.enabled;
    s.severity = r.severity;
    s.for_s = r.for_s;
    s.clear_for_s = r.clear_for_s;
    return s;
  }
  CustomRule rule_;
};

}  // namespace

std::optional<double> rule_metric_value(const std::string& key, const WindowStats& w,
                                        const HardwareLimits& hw) {
  if (const auto m = metric_from_key(key)) return w.get(*m);
  if (key == "efficiency") return efficiency_score(w.mean);
  if (key == "sm_ratio") {
    const auto e = efficiency_score(w.mean);
    return e ? std::optional<double>(*e / 100) : std::nullopt;
  }
  const auto share = [](std::optional<double> v, std::optional<double> total) {
    return v && total && *total > 0 ? std::optional<double>(*v / *total * 100) : std::nullopt;
  };
  const auto busier = [&](Metric a, Metric b) -> std::optional<double> {
    if (!w.mean.has(a) && !w.mean.has(b)) return std::nullopt;
    return std::max(w.mean.value_or(a, 0), w.mean.value_or(b, 0));
  };
  if (key == "mem_used_pct") return share(w.get(Metric::MemUsedMib), hw.mem_total_mib);
  if (key == "power_pct") return share(w.get(Metric::PowerW), hw.power_limit_w);
  if (key == "pcie_link_pct")
    return share(busier(Metric::PcieRxMibs, Metric::PcieTxMibs), hw.pcie_mibs);
  if (key == "nvlink_link_pct") {
    return share(busier(Metric::NvlinkRxMibs, Metric::NvlinkTxMibs), hw.nvlink_mibs);
  }
  return std::nullopt;
}

std::vector<std::unique_ptr<AlertRule>> make_alert_rules(const DiagnosisConfig& config) {
  std::vector<std::unique_ptr<AlertRule>> rules;
  for (const auto& s : config.rules) {
    if (!s.enabled) continue;
    if (s.id == "high_util_low_activity")
      rules.push_back(std::make_unique<HighUtilLowActivity>(s));
    else if (s.id == "low_efficiency")
      rules.push_back(std::make_unique<LowEfficiency>(s));
    else if (s.id == "stalled")
      rules.push_back(std::make_unique<Stalled>(s));
    else if (s.id == "memory_growth")
      rules.push_back(std::make_unique<MemoryGrowth>(s));
    else if (s.id == "idle_holding_memory")
      rules.push_back(std::make_unique<IdleHoldingMemory>(s));
    else if (s.id == "throttled")
      rules.push_back(std::make_unique<Throttled>(s));
    else if (s.id == "gpu_imbalance")
      rules.push_back(std::make_unique<GpuImbalance>(s));
  }
  for (const auto& c : config.custom_rules) {
    if (c.enabled) rules.push_back(std::make_unique<ThresholdRule>(c));
  }
  return rules;
}

}  // namespace gpulens::diagnosis

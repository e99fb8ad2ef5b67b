// SPDX-License-Identifier: Apache-2.0
#include "verdict/ranked_fixes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/text_units.hpp"
#include "diagnosis/state_table.hpp"

namespace gpulens::verdict {
namespace {

// How much a second in a state asks for a change: the state table's weight
// (compute_bound's fixes are the next step, not a repair).
double state_weight(diagnosis::GpuState s) {
  return diagnosis::state_row(s).fix_weight;
}

double severity_weight(diagnosis::Severity s) {
  switch (s) {
    case diagnosis::Severity::Critical:
      return 2.0;
    case diagnosis::Severity::Warning:
      return 1.0;
    case diagnosis::Severity::Info:
      return 0.5;
  }
  return 1.0;
}

struct Finding {
  FixTier tier = FixTier::Steady;
  double score = 0;
  double longest = -1;
  std::vector<std::string> fixes;  // from the longest occurrence
  std::set<int> gpus;
  std::size_t first_seen = 0;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string gpu_prefix(const std::set<int>& gpus) {
  if (gpus.empty()) return {};
  std::string list;
  std::size_t i = 0;
  for (int g : gpus) {
    list += (i == 0 ? "" : i + 1 == gpus.size() ? " and " : ", ") + std::to_string(g);
    ++i;
  }
  return fmt::format("{} {}: ", gpus.size() == 1 ? "GPU" : "GPUs", list);
}

class Findings {
 public:
  void add(const std::string& key, FixTier tier, int gpu, double seconds, double weight,
           const std::vector<std::string>& fixes) {
    if (weight <= 0 || fixes.empty()) return;
    auto [it, inserted] = map_.try_emplace(key);
    Finding& f = it->second;
    if (inserted) f.first_seen = map_.size();
    f.tier = std::min(f.tier, tier);
    if (inserted) f.tier = tier;
    f.score += seconds * weight;
    if (gpu >= 0) f.gpus.insert(gpu);
    if (seconds > f.longest) {
      f.longest = seconds;
      f.fixes = fixes;
    }
  }
  std::vector<std::pair<std::string, const Finding*>> ordered() const {
    std::vector<std::pair<std::string, const Finding*>> out;
    for (const auto& [key, f] : map_) out.emplace_back(key, &f);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      if (a.second->tier != b.second->tier) return a.second->tier < b.second->tier;
      if (a.second->score != b.second->score) return a.second->score > b.second->score;
      return a.second->first_seen < b.second->first_seen;
    });
    return out;
  }

 private:
  std::map<std::string, Finding> map_;
};

}  // namespace

std::string_view fix_tier_id(FixTier tier) {
  switch (tier) {
    case FixTier::OutOfMemory:
      return "out_of_memory";
    case FixTier::Hang:
      return "hang";
    case FixTier::Critical:
      return "critical";
    case FixTier::Imbalance:
      return "imbalance";
    case FixTier::Steady:
      break;
  }
  return "steady_state";
}

bool advises_precision(const std::string& fix) {
  const std::string f = lower(fix);
  for (const char* k : {"mixed precision", "bf16/fp16", "tf32", "fp8"}) {
    if (f.find(k) != std::string::npos) return true;
  }
  return false;
}

std::string out_of_memory_fix(const JobOutcome& o) {
  return fmt::format(
      "The job ran out of device memory{}: find what each step keeps alive (tensors kept in a "
      "list, losses summed without .item(), a growing cache) with torch.cuda.memory_summary() "
      "or a memory snapshot (torch.cuda.memory._record_memory_history()); if nothing leaks, "
      "lower the batch size or use activation checkpointing.",
      o.gpu ? fmt::format(" on GPU {}", *o.gpu) : std::string());
}

namespace {

constexpr std::string_view kLaunchBoundAbout = "state:launch_bound";

// A state that reads low SM activity while a kernel is resident, whose fixes fill
// the SMs (more blocks, a larger batch, bigger kernels): a spinning collective
// looks the same.
bool fills_sms(diagnosis::GpuState s) {
  return s == diagnosis::GpuState::SmUnderused || s == diagnosis::GpuState::LaunchBound;
}

// Collectives hold most of the job's kernel time (the kernel view says so).
bool mostly_collectives(const FixInputs& in) {
  return in.collectives != nullptr && in.collectives->share >= kCollectiveMajority &&
         !in.collectives->fix.empty();
}

// Alerts whose fixes are those of the GPU's state when they fired
// (diagnosis::fixes_for_alert), and of those the ones that read low SM activity
// while a kernel is resident.
bool state_fix_alert(const std::string& rule) {
  return rule == "low_efficiency" || rule == "high_util_low_activity" ||
         rule == "idle_holding_memory";
}
bool low_sm_alert(const std::string& rule) {
  return rule == "low_efficiency" || rule == "high_util_low_activity";
}

// A stalled alert on the same GPU over at least this share of an alert's span
// (the timeline's rule for state runs, diagnosis/timeline.cpp): the alert's state
// fixes would tune a kernel that waits for something that never comes. An alert
// that fired before the stall was confirmed took the state's fixes (more blocks)
// without knowing.
constexpr double kHangOverlapMin = 0.25;

bool hang_covers(const diagnosis::DiagnosisReport& report, int gpu, double from_t, double to_t,
                 double end) {
  const double span = to_t - from_t;
  if (span <= 0) return false;
  return std::any_of(report.alerts.begin(), report.alerts.end(), [&](const auto& a) {
    if (a.gpu != gpu || a.rule != "stalled") return false;
    const double from = std::max(from_t, a.since);
    const double to = std::min(to_t, a.resolved_at.value_or(std::max(end, a.fired_at)));
    return to - from >= kHangOverlapMin * span;
  });
}

// Every finding of the job with its fixes: the out-of-memory death, the state
// runs outside the steady state's edges, the alerts.
Findings collect_findings(const diagnosis::DiagnosisReport& report, const FixInputs& in) {
  const bool oom = in.outcome != nullptr && in.outcome->out_of_memory;
  Findings findings;
  if (oom) {
    // Leads its tier, before the alert that forecast it.
    constexpr double kFirst = 1e12;
    findings.add("out_of_memory", FixTier::OutOfMemory, in.outcome->gpu.value_or(-1), kFirst, 1.0,
                 {out_of_memory_fix(*in.outcome)});
  }
  for (const auto& run : report.timeline) {
    if (in.steady != nullptr && in.steady->in_edges(run.gpu, run.start, run.end)) continue;
    const FixTier tier =
        run.state == diagnosis::GpuState::WaitingOnPeer ? FixTier::Imbalance : FixTier::Steady;
    if (fills_sms(run.state) && mostly_collectives(in)) {
      // The few SMs busy are a collective's channels: more blocks would not help.
      findings.add("kernels:communication", tier, run.gpu, run.end - run.start,
                   state_weight(run.state), {in.collectives->fix});
      continue;
    }
    findings.add("state:" + std::string(diagnosis::state_id(run.state)), tier, run.gpu,
                 run.end - run.start, state_weight(run.state), run.fixes);
  }
  for (const auto& a : report.alerts) {
    const double until = a.resolved_at.value_or(std::max(in.end, a.fired_at));
    FixTier tier =
        a.severity == diagnosis::Severity::Critical ? FixTier::Critical : FixTier::Steady;
    if (a.rule == "stalled") tier = FixTier::Hang;
    // The alert that forecast the out-of-memory death explains it.
    if (oom && a.rule == "memory_growth") tier = FixTier::OutOfMemory;
    if (state_fix_alert(a.rule) && hang_covers(report, a.gpu, a.since, until, in.end)) continue;
    if (low_sm_alert(a.rule) && mostly_collectives(in)) {
      findings.add("kernels:communication", tier, a.gpu, std::max(until - a.since, 1.0),
                   severity_weight(a.severity), {in.collectives->fix});
      continue;
    }
    findings.add("alert:" + a.rule, tier, a.gpu, std::max(until - a.since, 1.0),
                 severity_weight(a.severity), a.fixes);
  }
  return findings;
}

// The list of fixes, filled seat by seat from the findings in rank order.
class Seating {
 public:
  Seating(std::vector<std::pair<std::string, const Finding*>> order, const FixInputs& in)
      : order_(std::move(order)),
        in_(in),
        tensor_busy_(in.steady_tensor_pct && *in.steady_tensor_pct >= kSteadyTensorBusyPct),
        taken_(order_.size(), 0) {}

  // What the headline leads with gets its first fix first, in the headline's order.
  void seat_leads() {
    for (std::size_t i = 0; i < order_.size() && out_.size() < in_.count; ++i) {
      if (order_[i].second->tier == FixTier::Steady) break;
      if (auto text = next(i)) seat(i, *text);
    }
  }

  // The remaining seats by the D'Hondt rule: the next fix comes from the finding
  // with the most weight per fix already taken, so a dominant bottleneck gets
  // several fixes and a minor one still gets its first. Earlier tiers win ties
  // and come first on the list.
  void seat_by_dhondt() {
    std::vector<bool> exhausted(order_.size(), false);
    while (out_.size() < in_.count) {
      std::optional<std::size_t> best;
      double best_q = 0;
      for (std::size_t i = 0; i < order_.size(); ++i) {
        if (exhausted[i] || taken_[i] >= order_[i].second->fixes.size()) continue;
        const double q = order_[i].second->score / static_cast<double>(taken_[i] + 1);
        if (!best || q > best_q) {
          best = i;
          best_q = q;
        }
      }
      if (!best) break;
      if (auto text = next(*best)) {
        seat(*best, *text);
      } else {
        exhausted[*best] = true;
      }
    }
  }

  // The list, earlier tiers first.
  std::vector<RankedFix> take() {
    std::stable_sort(out_.begin(), out_.end(),
                     [](const RankedFix& a, const RankedFix& b) { return a.tier < b.tier; });
    return std::move(out_);
  }

 private:
  // The next fix of a finding that is not already on the list, or none.
  std::optional<std::string> next(std::size_t i) {
    const Finding& f = *order_[i].second;
    while (taken_[i] < f.fixes.size()) {
      const std::string& text = f.fixes[taken_[i]++];
      if (tensor_busy_ && advises_precision(text)) continue;  // the job already does it
      // The same advice from two findings (a hang's fix leads the runs it
      // overlaps, too) is given once, where it ranks first.
      const bool seen = std::any_of(out_.begin(), out_.end(),
                                    [&](const RankedFix& r) { return r.text.ends_with(text); });
      if (!seen) return text;
    }
    return std::nullopt;
  }

  void seat(std::size_t i, const std::string& text) {
    const Finding& f = *order_[i].second;
    RankedFix r;
    r.text = (in_.job_gpus > 1 ? gpu_prefix(f.gpus) : std::string()) + text;
    // A launch-bound GPU's first fix names the kernels to start with, from the counts.
    if (order_[i].first == kLaunchBoundAbout && in_.launches != nullptr && !launch_named_) {
      const std::string evidence =
          launch_evidence_text(*in_.launches, std::vector<int>(f.gpus.begin(), f.gpus.end()));
      if (!evidence.empty()) {
        r.text += " " + evidence;
        launch_named_ = true;
      }
    }
    r.about = order_[i].first;
    r.tier = f.tier;
    r.gpus.assign(f.gpus.begin(), f.gpus.end());
    out_.push_back(std::move(r));
  }

  std::vector<std::pair<std::string, const Finding*>> order_;
  const FixInputs& in_;
  bool tensor_busy_;
  std::vector<std::size_t> taken_;
  std::vector<RankedFix> out_;
  bool launch_named_ = false;  // the counts' kernels are named once, in the first such fix
};

}  // namespace

std::string launch_evidence_text(const LaunchEvidence& e, const std::vector<int>& gpus) {
  std::string kernels;
  std::size_t named = 0;
  for (const auto& [name, share] : e.top) {
    if (named == kLaunchEvidenceKernels || share < kLaunchEvidenceMinShare) break;
    kernels +=
        fmt::format("{}`{}` ({} of launches)", named == 0 ? "" : ", ", name, share_text(share));
    ++named;
  }
  if (named == 0) return {};
  std::string rates;
  for (int g : gpus) {
    const auto it = e.per_second.find(g);
    if (it == e.per_second.end()) continue;
    rates += rates.empty() ? "; " : ", ";
    rates += fmt::format("GPU {} was fed {:.0f} launches a second", g, it->second);
  }
  return fmt::format("The launch counts say which kernels to fold first: {}{}.", kernels, rates);
}

std::vector<RankedFix> rank_fixes(const diagnosis::DiagnosisReport& report, const FixInputs& in) {
  const Findings findings = collect_findings(report, in);
  Seating seating(findings.ordered(), in);
  seating.seat_leads();
  seating.seat_by_dhondt();
  return seating.take();
}

}  // namespace gpulens::verdict

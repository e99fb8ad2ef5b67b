// SPDX-License-Identifier: Apache-2.0
#include "verdict/headline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "core/text_units.hpp"
#include "verdict/gpu_models.hpp"
#include "verdict/state_words.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::verdict {
namespace {

std::string gib(double mib) {
  return fmt::format("{:.1f}", mib / 1024.0);
}

double job_seconds(const Verdict& v) {
  if (v.job.start && v.job.end && *v.job.end > *v.job.start) return *v.job.end - *v.job.start;
  return v.duration_s;
}

std::string at(const Verdict& v, double t) {
  return fmt::format("+{:.1f} s", t - v.start.value_or(t));
}

std::string on_gpu(const Verdict& v, int gpu) {
  return v.devices.size() > 1 ? fmt::format(" of GPU {}", gpu) : std::string();
}

// Why the job's stderr cannot speak to how it died, in words.
std::string unread_stderr(const StderrScan& scan) {
  if (scan.state == "off") return "it was not read (--no-stderr-scan)";
  if (scan.state == "not_captured") return "it could not be captured";
  if (scan.state == "incomplete") return "it was not read to the job's end";
  return "the recording does not say what it held";
}

// The job's line, up to the end of a sentence near kQuoteMax bytes: PyTorch's
// goes on about fragmentation and a link for 300 more (the report's JSON keeps it).
constexpr std::size_t kQuoteMax = 200;
std::string quote(std::string_view line) {
  if (line.size() <= kQuoteMax) return std::string(line);
  const auto cut = line.rfind(". ", kQuoteMax);
  if (cut != std::string_view::npos && cut > kQuoteMax / 3) {
    return std::string(line.substr(0, cut + 1)) + " ...";
  }
  std::size_t at = kQuoteMax;  // on a character boundary
  while (at > 0 && (static_cast<unsigned char>(line[at]) & 0xC0) == 0x80) --at;
  return std::string(line.substr(0, at)) + "...";
}

// "“torch.OutOfMemoryError: ...” (4.0 GiB asked for, 3.2 GiB free)".
std::string said_text(const StderrScan& scan) {
  std::string text = fmt::format("“{}”", quote(scan.oom_message));
  if (scan.oom_tried_mib && scan.oom_free_mib) {
    text += fmt::format(" ({} GiB asked for, {} GiB free)", gib(*scan.oom_tried_mib),
                        gib(*scan.oom_free_mib));
  } else if (scan.oom_tried_mib) {
    text += fmt::format(" ({} GiB asked for)", gib(*scan.oom_tried_mib));
  }
  return text;
}

std::optional<HeadlineItem> death(const Verdict& v) {
  const JobOutcome& o = v.outcome;
  if (!o.died()) return std::nullopt;
  const std::string after = duration_text(job_seconds(v));
  const std::string how = o.signal ? "killed by " + signal_name(*o.signal)
                                   : fmt::format("exit code {}", o.exit_code.value_or(0));
  const bool figures = o.memory_peak_mib && o.memory_total_mib;
  const std::string memory =
      figures ? fmt::format("device memory{} stood at {} of {} GiB in its last seconds",
                            on_gpu(v, o.gpu.value_or(0)), gib(*o.memory_peak_mib),
                            gib(*o.memory_total_mib))
              : std::string();
  HeadlineItem item;
  item.gpu = o.gpu;
  if (o.said_out_of_memory()) {
    // The job's own words first; the counters say how full the device was.
    item.kind = "out_of_memory";
    item.text = fmt::format("The job died out of memory after {} ({}): it said {}.", after, how,
                            said_text(o.stderr_scan));
    if (figures) item.text += fmt::format(" The counters: {}.", memory);
    return item;
  }
  if (o.out_of_memory) {
    item.kind = "out_of_memory";
    item.text = fmt::format(
        "The job died out of memory after {} ({}): device memory{} reached {} "
        "of {} GiB.",
        after, how, on_gpu(v, o.gpu.value_or(0)), gib(*o.memory_peak_mib),
        gib(*o.memory_total_mib));
    item.text += o.stderr_scan.read()
                     ? " This rests on the counters alone: its stderr held no out-of-memory "
                       "message in a form gpulens knows."
                     : " This rests on the counters alone: on its stderr, " +
                           unread_stderr(o.stderr_scan) + ".";
    return item;
  }
  item.kind = "died";
  item.text = o.signal
                  ? fmt::format("The job was killed by {} after {}.", signal_name(*o.signal), after)
                  : fmt::format("The job failed with exit code {} after {}.",
                                o.exit_code.value_or(0), after);
  if (o.stderr_scan.read()) {
    // Both witnesses agree: neither the job nor the counters say out of memory.
    item.text += figures ? fmt::format(
                               " Its stderr held no out-of-memory message, and {}: not "
                               "out of memory.",
                               memory)
                         : " Its stderr held no out-of-memory message.";
  } else if (figures) {
    item.text += fmt::format(
        " Device memory{} stood at {} of {} GiB in its last seconds, short of the ceiling; "
        "this rests on the counters alone: on its stderr, {}.",
        on_gpu(v, o.gpu.value_or(0)), gib(*o.memory_peak_mib), gib(*o.memory_total_mib),
        unread_stderr(o.stderr_scan));
  }
  return item;
}

std::string alert_text(const Verdict& v, const diagnosis::AlertRecord& a) {
  return fmt::format(
      "{} ({}) on GPU {} from {}{}: {}", rule_words(a.rule), diagnosis::severity_id(a.severity),
      a.gpu, at(v, a.fired_at),
      a.resolved_at ? ", resolved " + at(v, *a.resolved_at) : ", still firing at the end",
      a.message);
}

// "compute-bound 48 %, interconnect-bound 33 %" over the steady state.
std::string mix(const Verdict& v) {
  const double steady = 1.0 - v.edges_share;
  if (steady <= 0 || v.states.empty()) return {};
  std::string out;
  int listed = 0;
  const double top = v.states.front().share / steady;
  for (const auto& s : v.states) {
    const double share = s.share / steady;
    if (listed == 3 || (listed > 0 && share < 0.05)) break;
    std::optional<double> held;
    if (s.state == diagnosis::GpuState::IdleHoldingMemory) held = v.steady_usage.peak_mem_mib;
    out += (listed == 0 ? "" : ", ") + state_words(s.state, held) + " " + share_text(share);
    ++listed;
  }
  if (top >= 0.6 && top < 0.995) out = "mostly " + out;
  return out;
}

std::string imbalance_text(const Imbalance& im) {
  std::string out =
      fmt::format("GPU {} waited on {} for {} ({} of its steady state)", im.gpu,
                  im.peer ? fmt::format("GPU {}", *im.peer) : std::string("another GPU"),
                  duration_text(im.waiting_s), share_text(im.share));
  if (im.sm_active && im.peer_sm_active) {
    out += fmt::format(": SMs busy {} against {} on GPU {}", share_text(*im.sm_active),
                       share_text(*im.peer_sm_active), *im.peer);
  }
  return out;
}

// Why SM activity is missing, as the diagnosis said it (diagnosis/hardware.cpp:
// an older generation has no GPM; a Hopper or Blackwell GPU's was denied or not read).
std::string gpm_missing(const Verdict& v) {
  for (const auto& g : v.diagnosis.gpus) {
    std::string_view why = g.limits.gpm_missing_reason;
    // A recording marks what it could not read "n/a: why" (trace-format.md): the why is for people.
    if (why.starts_with("n/a: ")) why.remove_prefix(5);
    if (!why.empty()) return std::string(why);
  }
  return "GPM needs Hopper or newer";
}

// The headline of a job whose SM activity was not measured says so, and what would
// settle it, so that "busy" is not read as "working well".
std::string not_measured_text(const Verdict& v) {
  return fmt::format(
      " SM activity was not measured: {}. How well the kernels use the GPU is not known, and "
      "the funnel stops at kernel-active; a recording with GPM (Hopper or newer) would settle "
      "it, and `gpulens run --kernels` shows which kernels take the time.",
      gpm_missing(v));
}

// A job the scheduler says held GPUs, on which no kernel ran: the waste admins
// hunt (Jobstats' and Job Defense Shield's 0 % jobs), said with what it cost.
std::string held_idle_text(const Verdict& v) {
  const std::size_t n = v.devices.empty() ? v.usage.size() : v.devices.size();
  std::string text = fmt::format("Held {} GPU{} for {} and ran nothing on {}", n, n == 1 ? "" : "s",
                                 duration_text(v.duration_s), n == 1 ? "it" : "them");
  if (v.cost.total) {
    // Cents where they matter; a short job's fraction of a cent in 3 digits.
    const double total = *v.cost.total;
    text +=
        fmt::format(": {}{} paid for {}", currency_symbol(v.cost.currency),
                    total >= 0.995 ? fmt::format("{:.2f}", total) : fmt::format("{:.3g}", total),
                    n == 1 ? "an idle GPU" : "idle GPUs");
  }
  return text + ".";
}

HeadlineItem steady_state(const Verdict& v) {
  HeadlineItem item;
  if (!v.steady.any_work()) {
    // Nothing worked: the whole job is its idle time, no start-up to set apart.
    item.kind = "idle";
    if (v.total.allocated_basis == AllocatedBasis::Scheduler && v.total.allocated.active_s > 0) {
      item.text = held_idle_text(v);
      return item;
    }
    const diagnosis::GpuState s =
        v.states.empty() ? diagnosis::GpuState::Idle : v.states.front().state;
    item.text = fmt::format("No GPU work ran in {}: {}.", duration_text(v.duration_s),
                            state_words(s, v.total.peak_mem_mib));
    return item;
  }
  item.kind = "steady_state";
  const double steady_s = *v.steady.end - *v.steady.start;
  const double before = *v.steady.start - v.start.value_or(*v.steady.start);
  const double after = v.end.value_or(*v.steady.end) - *v.steady.end;
  std::string edges;
  if (before >= 0.5 && after >= 0.5) {
    edges = fmt::format(", between {} of start-up and {} of tear-down", duration_text(before),
                        duration_text(after));
  } else if (before >= 0.5) {
    edges = fmt::format(", after {} of start-up", duration_text(before));
  } else if (after >= 0.5) {
    edges = fmt::format(", before {} of tear-down", duration_text(after));
  }
  item.text = fmt::format("Steady state, {} of {}{}: {}", duration_text(steady_s),
                          duration_text(v.duration_s), edges, mix(v));
  const auto sm = v.steady_usage.sm.ratio();
  const auto tensor = v.steady_usage.tensor.ratio();
  if (sm) {
    item.text += fmt::format(" (SMs busy {}{})", share_text(*sm),
                             tensor ? ", tensor pipes " + share_text(*tensor) : std::string());
  }
  const double steady = 1.0 - v.edges_share;
  const bool healthy = !v.states.empty() &&
                       v.states.front().state == diagnosis::GpuState::ComputeBound && steady > 0 &&
                       v.states.front().share / steady >= 0.6;
  if (healthy && v.imbalance.empty()) item.text += ": healthy, the SMs do the work";
  if (!v.imbalance.empty()) item.text += "; imbalance: " + imbalance_text(v.imbalance.front());
  item.text += ".";
  if (!sm) item.text += not_measured_text(v);
  return item;
}

}  // namespace

std::vector<HeadlineItem> build_headline(const Verdict& v) {
  std::vector<HeadlineItem> out;
  if (!v.measured) {
    if (auto d = death(v)) out.push_back(*d);
    out.push_back({"not_measured", "Nothing was measured: " + v.not_measured, std::nullopt});
    return out;
  }
  if (auto d = death(v)) out.push_back(*d);
  // The alert that forecast an out-of-memory death comes right after it.
  if (v.outcome.out_of_memory) {
    for (const auto& a : v.alerts) {
      if (a.rule == "memory_growth") out.push_back({"alert", alert_text(v, a), a.gpu});
    }
  }
  for (const auto& a : v.alerts) {
    if (a.rule != "stalled") continue;
    const double until = a.resolved_at.value_or(v.end.value_or(a.fired_at));
    out.push_back({"hang",
                   fmt::format("Hang from {} for {}: {}", at(v, a.since),
                               duration_text(std::max(0.0, until - a.since)), a.message),
                   a.gpu});
  }
  for (const auto& a : v.alerts) {
    if (a.severity != diagnosis::Severity::Critical || a.rule == "stalled") continue;
    if (v.outcome.out_of_memory && a.rule == "memory_growth") continue;
    out.push_back({"critical_alert", alert_text(v, a), a.gpu});
  }
  out.push_back(steady_state(v));
  for (std::size_t i = 1; i < v.imbalance.size(); ++i) {
    out.push_back({"imbalance", imbalance_text(v.imbalance[i]) + ".", v.imbalance[i].gpu});
  }
  if (v.steady.any_work() && v.edges_share >= 0.005) {
    const double before = *v.steady.start - v.start.value_or(*v.steady.start);
    const double after = v.end.value_or(*v.steady.end) - *v.steady.end;
    std::string parts;
    if (v.startup_share >= 0.005) {
      parts = fmt::format("Start-up ({}, {} of the GPU time)", duration_text(before),
                          share_text(v.startup_share));
    }
    if (v.teardown_share >= 0.005) {
      parts +=
          fmt::format("{} ({}, {} of the GPU time)", parts.empty() ? "Tear-down" : " and tear-down",
                      duration_text(after), share_text(v.teardown_share));
    }
    out.push_back({"edges",
                   parts + " ran no sustained GPU work: reported apart, not counted as waste.",
                   std::nullopt});
  }
  return out;
}

}  // namespace gpulens::verdict
